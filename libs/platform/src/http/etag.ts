import type { StreamRevision } from '@filing/event-store';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PreconditionFailedError, ValidationError } from '../errors/domain-errors';
import { ApiIfMatchHeader } from './openapi';

/** What every single-resource answer carries: `version` = its stream revision. */
export interface Versioned {
  readonly version: number;
}

/** `ETag: "<version>"` (strong: the version names exactly one state of the resource). */
export function etagOf(version: number | bigint): string {
  return `"${version}"`;
}

/** Sets the ETag of a single-resource answer and returns the resource, for `return withETag(reply, view)`. */
export function withETag<T extends Versioned>(reply: FastifyReply, resource: T): T {
  reply.header('etag', etagOf(resource.version));
  return resource;
}

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/**
 * `If-Match` → the revision handleCommand must find (`ifMatch`), or undefined when absent or `*`
 * (the resource must exist, which every write on `/{id}` checks anyway). A strong or weak tag is
 * accepted (proxies may weaken ETags). A well-formed tag that is not one of our versions can never
 * match: 412 at once. A malformed header, or a list of tags, is a 400 naming `If-Match`.
 */
export function parseIfMatch(header: string | string[] | undefined): StreamRevision | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  const trimmed = value.trim();
  if (trimmed === '*') return undefined;
  const match = ENTITY_TAG.exec(trimmed);
  if (!match) {
    throw ValidationError.field('If-Match', 'If-Match must be one entity tag as sent in ETag (e.g. "3") or *');
  }
  if (!/^(0|[1-9]\d{0,15})$/.test(match[2])) throw new PreconditionFailedError();
  return BigInt(match[2]);
}

/**
 * `@IfMatch() ifMatch: StreamRevision | undefined` — pass it to the command as handleCommand's
 * `ifMatch`. It also declares the header on the route's OpenAPI operation (which then gets a 412).
 */
export const IfMatch = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): StreamRevision | undefined =>
    parseIfMatch(
      ctx.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers['if-match'],
    ),
  [(target, key) => ApiIfMatchHeader()(target, key!, Object.getOwnPropertyDescriptor(target, key!)!)],
);
