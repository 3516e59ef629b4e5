import { createParamDecorator, type ExecutionContext, UnauthorizedException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../events/envelope';

/**
 * Who an authenticated request acts for. The auth module's guards put it on the request; every
 * other context reads it through `@Ctx()` / `@CurrentPrincipal()` and never depends on auth.
 */
export interface Principal {
  readonly kind: 'client' | 'operator' | 'user';
  /** The account every query and command of this request is scoped to; null for operators. */
  readonly accountId: string | null;
  /** client_id, operator client_id, or user id. */
  readonly subjectId: string;
  readonly scopes: readonly string[];
}

interface RequestWithPrincipal {
  principal?: Principal;
  headers: Record<string, string | string[] | undefined>;
  id?: string;
}

export function setPrincipal(request: object, principal: Principal): void {
  (request as RequestWithPrincipal).principal = principal;
}

export function getPrincipal(request: object): Principal | undefined {
  return (request as RequestWithPrincipal).principal;
}

/** The principal of a guarded route; a route reached without one is a wiring bug, answered 401. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = getPrincipal(ctx.switchToHttp().getRequest());
  if (!principal) throw new UnauthorizedException();
  return principal;
});

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The command context of a guarded request: its account, its actor, and a correlation id taken
 * from a well-formed `X-Request-Id` header or made up.
 */
export const Ctx = createParamDecorator((_: unknown, ctx: ExecutionContext): CommandContext => {
  const request = ctx.switchToHttp().getRequest<RequestWithPrincipal>();
  const principal = getPrincipal(request);
  if (!principal) throw new UnauthorizedException();
  return commandContextOf(principal, request.headers['x-request-id']);
});

export function commandContextOf(principal: Principal, requestId?: string | string[]): CommandContext {
  const id = typeof requestId === 'string' && REQUEST_ID.test(requestId) ? requestId : randomUUID();
  return {
    account_id: principal.accountId,
    actor: `${principal.kind}:${principal.subjectId}`,
    correlation_id: id,
    causation_id: null,
  };
}
