import { APP_CONFIG, type AppConfig, getPrincipal } from '@filing/platform';
import { type ExecutionContext, HttpException, HttpStatus, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  getOptionsToken,
  getStorageToken,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requirementOf, routePath } from './api-access.guard';

/**
 * Requests to `/external-api/v1` per account, in a sliding window (`API_RATE_LIMIT`, default
 * 100 per second): every answer carries `X-RateLimit-Limit`, `-Remaining` and `-Reset`; over
 * the limit it is a 429 problem with `Retry-After`. Keyed by the token's account, so all of an
 * account's clients share one budget and one account cannot slow another. It runs after
 * ApiAccessGuard (registered after it), so an unauthenticated request is a 401, never counted.
 * In memory, per process, like the token endpoint's brake.
 */
@Injectable()
export class ApiRateLimitGuard extends ThrottlerGuard {
  constructor(
    @Inject(getOptionsToken()) options: ThrottlerModuleOptions,
    @Inject(getStorageToken()) storage: ThrottlerStorage,
    reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(options, storage, reflector);
  }

  /**
   * The library's canActivate reads five route decorators per throttler through the Reflector on
   * every request; none is used here (one budget for every route), so the one configured
   * throttler goes straight to its handleRequest (counting, headers, the 429).
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http' || this.config.apiRateLimit === null) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (
      getPrincipal(request) === undefined ||
      requirementOf(routePath(request), request.method)?.realm !== 'external-api'
    )
      return true;
    // The module's throttler is made of this same config (auth.module.ts).
    const { limit, windowMs } = this.config.apiRateLimit;
    return this.handleRequest({
      context,
      limit,
      ttl: windowMs,
      // The library's default: once over the limit, refused for a whole window.
      blockDuration: windowMs,
      throttler: this.throttlers[0],
      getTracker: this.commonOptions.getTracker!,
      generateKey: this.commonOptions.generateKey!,
    });
  }

  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    const principal = getPrincipal(request)!;
    return principal.accountId ?? principal.subjectId;
  }

  /** One budget per account across every route (the library's default is per route). */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `api-rate:${name}:${tracker}`;
  }

  protected override async throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const window = this.config.apiRateLimit!;
    // The library sets only Retry-After on a refusal; the budget headers are on every answer.
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    reply
      .header('X-RateLimit-Limit', detail.limit)
      .header('X-RateLimit-Remaining', 0)
      .header('X-RateLimit-Reset', detail.timeToBlockExpire);
    throw new HttpException(
      `This account made more than ${window.limit} requests in ${window.windowMs / 1000} s; retry after ${detail.timeToBlockExpire} s (Retry-After)`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}
