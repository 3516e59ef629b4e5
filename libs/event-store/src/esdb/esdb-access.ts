import { AccessDeniedError } from '@eventstore/db-client';
import { EventStoreAccessError } from '../errors';
import { EsdbEventStore } from './esdb-event-store';

/** gRPC UNAUTHENTICATED: the node's answer to a wrong user or password (its HTTP 401). */
const UNAUTHENTICATED = 16;
/** What Node's TLS says when the node's certificate does not verify against the CA file. */
const UNTRUSTED_CERTIFICATE =
  /(?:unable to verify|self[- ]signed certificate|unable to get (?:local )?issuer|certificate has expired|does not match certificate's altnames|certificate signature failure|certificate is not yet valid)[^.;:]*/i;

/**
 * Reads the newest record of `$all` once, with the connection string's credentials, to tell at
 * start what can never work from what may work later: a refusal of the credentials or of the
 * server's certificate throws {@link EventStoreAccessError} (the service must not start and then
 * answer 503 to every request); a store that is down or slow passes (it may come up, /readyz
 * says so meanwhile).
 */
export async function verifyEventStoreAccess(connectionString: string, timeoutMs = 5_000): Promise<void> {
  const store = new EsdbEventStore({ connectionString, pingTimeoutMs: timeoutMs });
  try {
    await store.ping();
  } catch (err) {
    const refusal = accessProblem(err);
    if (refusal) throw new EventStoreAccessError(refusal);
  } finally {
    await store.close();
  }
}

function accessProblem(err: unknown): string | null {
  if (err instanceof AccessDeniedError) {
    const code = (err as { code?: unknown }).code;
    return code === UNAUTHENTICATED
      ? 'EventStoreDB refused the user or password of the connection string (wrong credentials)'
      : 'EventStoreDB denied access: the connection string names no user:password@, or its user may not read $all';
  }
  const message = errorChainText(err);
  const tls = UNTRUSTED_CERTIFICATE.exec(message);
  if (tls) {
    return `EventStoreDB's TLS certificate is not trusted (${tls[0].trim()}): tlsCAFile must name the CA that signed the node's certificate`;
  }
  return null;
}

function errorChainText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) parts.push(e.message);
  return parts.join(' / ');
}
