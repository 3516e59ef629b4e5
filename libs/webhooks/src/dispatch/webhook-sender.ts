import type { LookupAddress, LookupOptions } from 'node:dns';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
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

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * One POST per attempt over undici keep-alive pools. TLS is always verified; redirects are never
 * followed (undici's request has no redirect handling unless asked). The socket's DNS lookup is
 * the address guard itself, so the connection goes to the address that passed the check: a
 * rebinding DNS answer between the check and the connect cannot slip through.
 */
export class WebhookSender implements Sender {
  private readonly agent: Agent;

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
    const checked = checkUrlSyntax(url, this.options.allowPrivateNetworks);
    if ('problem' in checked)
      return done({ kind: 'error', error: checked.problem.code === 'not_public' ? 'address_refused' : 'other' });
    // The whole request's deadline, cleared once it is over: AbortSignal.timeout's timer would
    // live (and hold its signal) for the full timeout after every answered request.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DOMException('The request timed out', 'TimeoutError')),
      this.options.timeoutMs,
    );
    try {
      const response = await request(checked.url, {
        method: 'POST',
        headers: webhookHeaders(secrets, eventId, timestamp, body),
        body,
        dispatcher: this.agent,
        signal: deadline.signal,
      });
      // Drain (bounded) so the connection goes back to the pool; the body itself is not kept.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const statusCode = response.statusCode;
      const retryAfter =
        statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers['retry-after']) : null;
      return done({ kind: 'response', statusCode }, retryAfter);
    } catch (err) {
      if (err instanceof AddressRefusedError) return done({ kind: 'error', error: 'address_refused' });
      return done({ kind: 'error', error: errorKind(err) });
    } finally {
      clearTimeout(timer);
    }
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
