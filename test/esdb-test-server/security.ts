/**
 * The secure node: TLS and authentication as an EventStoreDB 24.10 node with
 * `EVENTSTORE_INSECURE=false` applies them to the gRPC API, plus a knob that makes reads slow.
 *
 * - TLS: the node certificate (signed by the test CA) over HTTP/2 with ALPN `h2` — what grpc-js's
 *   `ServerCredentials.createSsl` serves. No client certificate is asked for.
 * - Credentials arrive as `authorization: Basic base64(user:password)` call metadata (the client
 *   sends them only on TLS channels). AuthenticationMiddleware refuses a header whose user or
 *   password is wrong before any handler runs (HTTP 401, which grpc-js clients read as
 *   UNAUTHENTICATED); the client maps that status to AccessDeniedError.
 * - No credentials at all is the anonymous user. 24.10 denies anonymous stream access
 *   (`AllowAnonymousStreamAccess=false`): every Streams call fails with RpcExceptions.AccessDenied
 *   — PERMISSION_DENIED and the `exception: access-denied` trailer (AccessDeniedError too).
 *   ServerFeatures stays open to anyone, as on the node.
 * - Every configured user is an admin here: no ACLs, so `$all` and every stream are theirs.
 */
import { readFileSync } from 'node:fs';
import { Code, grpc, type GrpcModule } from './proto';

export interface SecurityArgs {
  /** PEM files of the node certificate and its key; both or neither (plaintext h2c). */
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  /** user → password; empty: no authentication (the insecure node). */
  readonly users: ReadonlyMap<string, string>;
}

const UNAUTHENTICATED = 16;

/** A unary call's answer: an error, or none and a value. */
type GrpcCallback = (error: unknown, value?: unknown) => void;

export function serverCredentials(args: SecurityArgs): GrpcModule.ServerCredentials {
  if (!args.tlsCert || !args.tlsKey) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(
    null,
    [{ cert_chain: readFileSync(args.tlsCert), private_key: readFileSync(args.tlsKey) }],
    false,
  );
}

/** `admin:changeit,ops:changeit` → a map; none (no authentication) without the flag. */
export function parseUsers(value: string | undefined): Map<string, string> {
  const users = new Map<string, string>();
  if (value === undefined) return users;
  for (const pair of value.split(',').filter(Boolean)) {
    const i = pair.indexOf(':');
    if (i <= 0) throw new Error('--users takes user:password pairs separated by commas');
    users.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return users;
}

type Refusal = Partial<GrpcModule.StatusObject>;

/** Null when the call may go on; otherwise how the node refuses it. */
export function authenticate(metadata: GrpcModule.Metadata, users: ReadonlyMap<string, string>): Refusal | null {
  if (users.size === 0) return null;
  const header = metadata.get('authorization')[0];
  if (header === undefined) {
    const trailer = new grpc.Metadata();
    trailer.set('exception', 'access-denied');
    return { code: Code.PERMISSION_DENIED, details: 'Access Denied', metadata: trailer };
  }
  const match = /^Basic (.+)$/.exec(String(header));
  const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const i = decoded.indexOf(':');
  const ok = i > 0 && users.get(decoded.slice(0, i)) === decoded.slice(i + 1);
  return ok ? null : { code: UNAUTHENTICATED, details: 'Bad HTTP status code 401 (Unauthorized)' };
}

export interface Gate {
  /** Milliseconds every Streams/Read waits before it is served (0: none). */
  readDelayMs: number;
}

/**
 * Wraps a service's handlers: authentication first (a refused call never reaches the handler),
 * then the read delay. Works for every call shape from the service definition.
 */
export function guarded(
  definition: GrpcModule.ServiceDefinition,
  impl: GrpcModule.UntypedServiceImplementation,
  users: ReadonlyMap<string, string>,
  gate: Gate,
): GrpcModule.UntypedServiceImplementation {
  const out: GrpcModule.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(impl)) {
    const method = definition[name] as GrpcModule.MethodDefinition<unknown, unknown> | undefined;
    const answersWithCallback = method ? !method.responseStream : true;
    const delayed = method?.path.endsWith('/Read') ?? false;
    out[name] = ((
      call: { metadata: GrpcModule.Metadata; emit(e: string, v: unknown): void },
      callback?: GrpcCallback,
    ) => {
      const refusal = authenticate(call.metadata, users);
      if (refusal) {
        if (answersWithCallback) callback!(refusal);
        else call.emit('error', refusal);
        return;
      }
      const serve = () => (handler as (call: unknown, callback?: GrpcCallback) => void)(call, callback);
      if (delayed && gate.readDelayMs > 0) setTimeout(serve, gate.readDelayMs);
      else serve();
    }) as GrpcModule.UntypedHandleCall;
  }
  return out;
}
