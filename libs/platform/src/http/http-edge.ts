import { Logger } from '@nestjs/common';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PROBLEM_CONTENT_TYPE, problemDetails } from './problem-details.filter';

/*
 * The refusals that happen before any route, guard or exception filter runs, answered in the
 * API's formats instead of Fastify's or Node's own JSON: problem+json, or on the OAuth endpoints
 * (`/o/…`) an RFC 6749 `invalid_request`.
 * - Fastify's router: a path with bad percent-encoding (400) or a path parameter over
 *   MAX_PARAM_LENGTH characters (414): `frameworkErrors`.
 * - Headers over MAX_HEADER_BYTES (431): an `onRequest` hook, which knows the path. Node's parser
 *   is given a larger limit (NODE_MAX_HEADER_BYTES) so that the hook sees the usual case.
 * - Whatever Node's HTTP parser refuses (a bad chunk size, two Content-Lengths, headers over
 *   Node's limit, a request too slow to arrive): the server's `clientError` event, which has only
 *   the socket, so the answer is written raw and the connection closed.
 */

export const MAX_PARAM_LENGTH = 100;
export const MAX_HEADER_BYTES = 16 * 1024;
/** Node's parser limit: above ours, so most oversized headers reach the hook and its path-aware answer. */
export const NODE_MAX_HEADER_BYTES = 64 * 1024;

const OAUTH_PREFIX = '/o/';
const HEADERS_TOO_LARGE = `The request headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`;
const logger = new Logger('HttpEdge');

interface EdgeAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * The answer to a request refused at the edge, for the path it was sent to (unknown when the
 * parser failed before reading it): RFC 6749 on `/o/` (with no-store, like every answer there),
 * problem+json elsewhere, naming `field` when the refusal is about one.
 */
export function edgeAnswer(path: string | undefined, status: number, detail: string, field?: string): EdgeAnswer {
  if (path?.startsWith(OAUTH_PREFIX)) {
    return {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache' },
      body: JSON.stringify({ error: 'invalid_request', error_description: detail }),
    };
  }
  const errors = field ? [{ field, message: detail }] : undefined;
  return {
    status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE },
    body: JSON.stringify(problemDetails(status, detail, errors)),
  };
}

/** Fastify's `frameworkErrors`: the router's refusals, which no hook or Nest filter sees. */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const path = pathOf(request.url);
  let answer: EdgeAnswer;
  if (error.code === 'FST_ERR_BAD_URL') {
    answer = edgeAnswer(
      path,
      400,
      'The path is not valid percent-encoding: every % must start an escape such as %2F',
      'path',
    );
  } else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    answer = edgeAnswer(path, 414, `A path parameter is longer than ${MAX_PARAM_LENGTH} characters`, 'path');
  } else {
    logger.error(`Router error on ${request.method} ${path}: ${error.code} ${error.message}`);
    answer = edgeAnswer(path, 500, 'An unexpected error occurred');
  }
  reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/** Adds the `onRequest` hook that refuses headers over MAX_HEADER_BYTES (431). Add it first. */
export function refuseOversizedHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (headerBytes(request.raw) <= MAX_HEADER_BYTES) return done();
    const answer = edgeAnswer(pathOf(request.url), 431, HEADERS_TOO_LARGE);
    reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
}

/** What Node counts against its header limit: the URL, header names and values. */
function headerBytes(raw: IncomingMessage): number {
  let bytes = raw.url?.length ?? 0;
  // rawHeaders are latin1 strings: one character per byte.
  for (const part of raw.rawHeaders) bytes += part.length;
  return bytes;
}

/** Node's parser error: `rawPacket` is the chunk it failed on (a Buffer, whatever Fastify's type says). */
type ParserError = ConnectionError & { reason?: string };
/** The response Node is writing on this connection, if a request got that far (private but long-standing). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Fastify's `clientErrorHandler` (Node's `clientError` event): a raw HTTP/1.1 answer on the
 * socket, then the connection is closed, as Node and Fastify do. Nothing is written once a
 * response has begun on the connection, or when the client has gone.
 */
export function answerClientError(error: ParserError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const inFlight = (socket as HttpSocket)._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    // The path: of the request whose body failed, or from the request line the parser choked on.
    const path = pathOf(inFlight?.req?.url) ?? requestLinePath(error.rawPacket);
    const answer =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? edgeAnswer(path, 431, HEADERS_TOO_LARGE)
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? edgeAnswer(path, 408, 'The request did not arrive in time')
          : edgeAnswer(path, 400, `The request is not valid HTTP/1.1${error.reason ? `: ${error.reason}` : ''}`);
    const head = [
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`,
      ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
      `content-length: ${Buffer.byteLength(answer.body)}`,
      'connection: close',
    ];
    socket.write(`${head.join('\r\n')}\r\n\r\n${answer.body}`);
  }
  socket.destroy(error);
}

function pathOf(url: string | undefined): string | undefined {
  return url?.split('?', 1)[0];
}

function requestLinePath(packet: unknown): string | undefined {
  if (!Buffer.isBuffer(packet)) return undefined;
  return /^[A-Z]+ ([^ \r\n?]+)/.exec(packet.toString('latin1', 0, Math.min(packet.length, 8192)))?.[1];
}
