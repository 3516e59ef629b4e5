import type { LookupAddress, LookupOptions } from 'node:dns';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { AddressRefusedError, checkUrlSyntax, resolveAllowed, type Resolver } from '../address/address-guard';
import { type AttemptResult, errorKind } from '../deliveries/outcome';
import { parseRetryAfter } from '../deliveries/retry-schedule';
import { signatureHeader } from '../signing/signature';

/** What the sender needs besides its resolver: plain data, so it crosses to the sender thread. */
export interface SenderSettings {
  readonly timeoutMs: number;
  readonly allowPrivateNetworks: boolean;
  /** PEM text of extra CAs trusted beside the system roots (WEBHOOK_CA_FILE's content). */
  readonly extraCa: string | null;
  /** Keep-alive connections per receiver origin. */
  readonly connectionsPerOrigin: number;
}

export interface SenderOptions extends SenderSettings {
  readonly resolver: Resolver;
}

/**
 * One attempt's request before signing (svix's PendingDispatch): the sender signs it, so the
 * HMACs are computed where the request is sent. `secrets` are opened signing secrets: never logged.
 */
export interface WebhookRequest {
  readonly url: string;
  readonly eventId: string;
  /** Unix seconds of this attempt (on the sender thread: when the request leaves). */
  readonly timestamp: number;
  readonly body: string;
  readonly secrets: readonly string[];
  /** The endpoint's id: on the sender thread, its requests share a lane (SendLanes). */
  readonly endpointId?: string;
  /**
   * The latest time (epoch ms) the POST may leave: past it, the request at its timeout would
   * outlast the delivery's claim (claimSendBy), and it is given up unsent. Absent: no claim to keep.
   */
  readonly sendBy?: number;
}

/**
 * What the dispatcher sends through (WebhookSender in a thread of its own: SenderThread). null:
 * the request never left (it waited in its endpoint's lane and was dropped, SendLanes).
 */
export interface Sender {
  send(request: WebhookRequest): Promise<SendResult | null>;
}

export interface SendResult {
  readonly result: AttemptResult;
  readonly durationMs: number;
  readonly retryAfterMs: number | null;
  /** When the request left (epoch ms), if it waited after it was prepared (in its lane). */
  readonly sentAt?: number;
}

export const USER_AGENT = 'FilingService-Webhooks/1.0';

/** What a POST's response gave: its status and Retry-After header. */
interface PostAnswer {
  readonly statusCode: number;
  readonly retryAfter: string | string[] | undefined;
}

/** Of a response's body, read and dropped so its connection is reused; past it the connection is closed. */
const RESPONSE_BODY_LIMIT = 64 * 1024;
/** URLs whose check is kept (one per endpoint); past it the cache starts over. */
const CHECKED_URLS_LIMIT = 10_000;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * One POST per attempt over undici keep-alive pools. TLS is always verified; redirects are never
 * followed (undici's dispatch has none unless an interceptor adds it). The socket's DNS lookup
 * is the address guard itself, so the connection goes to the address that passed the check: a
 * rebinding DNS answer between the check and the connect cannot slip through.
 */
export class WebhookSender implements Sender {
  private readonly agent: Agent;
  private readonly checkedUrls = new Map<string, ReturnType<typeof checkUrlSyntax>>();

  constructor(private readonly options: SenderOptions) {
    // One secure context for every connection: parsing the ~140 system roots per handshake was
    // a third of the dispatcher's CPU in the benchmark.
    const ca = options.extraCa ? [...rootCertificates, options.extraCa] : [...rootCertificates];
    const secureContext = createSecureContext({ ca });
    const lookup = (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
      resolveAllowed(hostname, options.resolver, options.allowPrivateNetworks).then(
        (a) =>
          lookupOptions.all
            ? callback(null, [{ address: a.address, family: a.family }])
            : callback(null, a.address, a.family),
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      );
    };
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { secureContext, rejectUnauthorized: true, timeout: options.timeoutMs, lookup },
    });
  }

  async send({ url, eventId, timestamp, body, secrets }: WebhookRequest): Promise<SendResult> {
    const started = performance.now();
    const done = (result: AttemptResult, retryAfterMs: number | null = null): SendResult => ({
      result,
      durationMs: performance.now() - started,
      retryAfterMs,
    });
    // IP-literal hosts never reach the lookup: check them here, at every attempt.
    const checked = this.checkedUrl(url);
    if ('problem' in checked)
      return done({ kind: 'error', error: checked.problem.code === 'not_public' ? 'address_refused' : 'other' });
    try {
      const { statusCode, retryAfter } = await this.post(
        checked.url,
        webhookHeaders(secrets, eventId, timestamp, body),
        body,
      );
      const retryAfterMs = statusCode === 429 || statusCode === 503 ? parseRetryAfter(retryAfter) : null;
      return done({ kind: 'response', statusCode }, retryAfterMs);
    } catch (err) {
      if (err instanceof AddressRefusedError) return done({ kind: 'error', error: 'address_refused' });
      return done({ kind: 'error', error: errorKind(err) });
    }
  }

  /**
   * The URL's check, kept per URL (an endpoint's URL is checked at every attempt, and parsing it
   * was a share of each): the answer depends on the text alone.
   */
  private checkedUrl(url: string): ReturnType<typeof checkUrlSyntax> {
    let checked = this.checkedUrls.get(url);
    if (checked === undefined) {
      checked = checkUrlSyntax(url, this.options.allowPrivateNetworks);
      if (this.checkedUrls.size >= CHECKED_URLS_LIMIT) this.checkedUrls.clear();
      this.checkedUrls.set(url, checked);
    }
    return checked;
  }

  /**
   * One POST through the agent's `dispatch`, with a handler that keeps only the status and the
   * Retry-After header: undici's `request` builds a body stream, an async resource and (with a
   * deadline) an AbortSignal per request, about half of each request's CPU in a loop against a
   * local receiver. Resolves once the response has ended (its body is read and dropped, at most
   * RESPONSE_BODY_LIMIT of it, so the connection goes back to the pool); a deadline or a body
   * past the limit that cuts a response short still answers its status. Rejects if no response
   * came (connection, TLS, address or timeout errors).
   */
  private post(url: URL, headers: Record<string, string>, body: string): Promise<PostAnswer> {
    return new Promise<PostAnswer>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | null = null;
      let timedOut: Error | null = null;
      let answer: PostAnswer | null = null;
      let received = 0;
      // The whole request's deadline (connecting, waiting, reading): undici's own timeouts each
      // bound one phase only.
      const timer = setTimeout(() => {
        timedOut = new DOMException('The request timed out', 'TimeoutError');
        // Still queued for a connection: the attempt ends now, the request when it would start.
        if (controller === null) settle(timedOut);
        else controller.abort(timedOut);
      }, this.options.timeoutMs);
      const settle = (err: Error | null) => {
        clearTimeout(timer);
        if (answer !== null) resolve(answer);
        else reject(err ?? new Error('The response ended without a status'));
      };
      this.agent.dispatch(
        { origin: url.origin, path: url.pathname + url.search, method: 'POST', headers, body },
        {
          onRequestStart(c) {
            // Timed out while queued for a connection: it never leaves.
            if (timedOut !== null) c.abort(timedOut);
            else controller = c;
          },
          onResponseStart(_c, statusCode, responseHeaders) {
            answer = { statusCode, retryAfter: responseHeaders['retry-after'] };
          },
          onResponseData(c, chunk) {
            received += chunk.length;
            if (received > RESPONSE_BODY_LIMIT) {
              settle(null);
              c.abort(new Error('The response body is past the limit'));
            }
          },
          onResponseEnd: () => settle(null),
          onResponseError: (_c, err) => settle(err),
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** The headers of a webhook POST (CONTRACT.md §5, Standard Webhooks), one signature per secret. */
export function webhookHeaders(
  secrets: readonly string[],
  eventId: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secrets, eventId, timestamp, body),
  };
}
