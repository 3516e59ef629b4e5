import { type ServiceKeys } from '../crypto/service-keys';
import { CONFIG_VARIABLES, ConfigProblem, type ConfigValues } from './variables';

export { directoryProblem } from './directory-check';
export { parseDuration, parseDurations, parseRateLimit } from './parsers';
export { fastifyTrustProxy, parseTrustProxy, type TrustProxy } from './trust-proxy';
import type { TrustProxy } from './trust-proxy';
export {
  CONFIG_VARIABLES,
  DEFAULT_API_RATE_LIMIT,
  DEFAULT_RETRY_DELAYS,
  DEFAULT_WEBHOOK_DISABLE_AFTER,
  DEFAULT_WEBHOOK_FAILING_AFTER,
} from './variables';

/** The service's configuration, read from environment variables (CONTRACT.md §6; declared in variables.ts). */
export interface AppConfig {
  readonly port: number;
  readonly eventStore:
    | { readonly kind: 'sqlite'; readonly dataDir: string }
    | { readonly kind: 'esdb'; readonly connectionString: string; readonly dataDir: string };
  /** Read models (`read.db`) live here whichever store holds the events. */
  readonly dataDir: string;
  readonly tokenTtlSeconds: number;
  readonly webhookRetryDelaysMs: readonly number[];
  readonly webhookTimeoutMs: number;
  readonly webhookAllowPrivateNetworks: boolean;
  readonly webhookCaFile: string | null;
  /** An endpoint whose attempts have all failed for this long is disabled (reason `failing`). */
  readonly webhookDisableAfterMs: number;
  /** WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT: the create after this many is a 409. */
  /** WEBHOOK_FAILING_AFTER: a failing streak this long is reported once (`webhook_endpoint.failing`). */
  readonly webhookFailingAfterMs: number;
  readonly webhookMaxEndpointsPerAccount: number;
  /** WEBHOOK_CLAIM_CLOCK_SKEW_MS: how far apart instances' clocks may be when a claim's lease is checked. */
  readonly webhookClaimClockSkewMs: number;
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Requests per account to `/external-api/v1` in a sliding window; null: unlimited (`off`). */
  readonly apiRateLimit: { readonly limit: number; readonly windowMs: number } | null;
  /**
   * The root of every service key, from `SECRETS_KEY` (and `SECRETS_KEY_PREVIOUS`, still accepted
   * for opening and checking): required with esdb, where every instance must hold the same one.
   * null: not set (sqlite only); `DATA_DIR/cursor.key` is the root then.
   */
  readonly secretsKey: ServiceKeys | null;
  /** Which peers may report the client's address and protocol (`X-Forwarded-*`); off by default. */
  readonly trustProxy: TrustProxy;
  /** The origin clients use (`PUBLIC_URL`), for absolute URLs the service publishes; null: `http://localhost:<port>`. */
  readonly publicUrl: string | null;
  /**
   * `/readyz` answers 503 while a running stream processor is further than this behind the head,
   * in log positions (`READY_MAX_LAG`): events with sqlite, bytes of log with EventStoreDB.
   */
  readonly readyMaxLag: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Thrown when any variable is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Validates the environment; collects every problem before failing so one start shows them all. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const input = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const problems: string[] = [];
  const values: Partial<Record<string, unknown>> = {};
  for (const [name, spec] of Object.entries(CONFIG_VARIABLES)) {
    try {
      values[name] = spec.parse(input(name) ?? spec.default, input);
    } catch (err) {
      if (err instanceof ConfigProblem) problems.push(...err.lines);
      else problems.push(`${name} ${(err as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return assemble(values as ConfigValues);
}

function assemble(v: ConfigValues): AppConfig {
  const dataDir = v.DATA_DIR;
  return {
    port: v.PORT,
    eventStore:
      v.EVENT_STORE === 'esdb'
        ? { kind: 'esdb', connectionString: v.EVENTSTORE_CONNECTION_STRING, dataDir }
        : { kind: 'sqlite', dataDir },
    dataDir,
    tokenTtlSeconds: v.TOKEN_TTL_SECONDS,
    webhookRetryDelaysMs: v.WEBHOOK_RETRY_DELAYS,
    webhookTimeoutMs: v.WEBHOOK_TIMEOUT_MS,
    webhookAllowPrivateNetworks: v.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    webhookCaFile: v.WEBHOOK_CA_FILE,
    webhookDisableAfterMs: v.WEBHOOK_DISABLE_AFTER,
    webhookFailingAfterMs: v.WEBHOOK_FAILING_AFTER,
    webhookMaxEndpointsPerAccount: v.WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT,
    webhookClaimClockSkewMs: v.WEBHOOK_CLAIM_CLOCK_SKEW_MS,
    tls: v.TLS_CERT_FILE,
    logLevel: v.LOG_LEVEL,
    apiRateLimit: v.API_RATE_LIMIT,
    secretsKey: v.SECRETS_KEY,
    trustProxy: v.TRUST_PROXY,
    publicUrl: v.PUBLIC_URL,
    readyMaxLag: v.READY_MAX_LAG,
  };
}

/** The README's configuration table, from the declared variables. */
export function configurationTable(): string {
  const rows = Object.entries(CONFIG_VARIABLES).map(([name, spec]) => {
    const title = 'title' in spec && spec.title ? spec.title : `\`${name}\``;
    const fallback =
      'defaultDoc' in spec && spec.defaultDoc
        ? spec.defaultDoc
        : 'default' in spec && spec.default !== undefined
          ? `\`${spec.default}\``
          : '—';
    return `| ${title} | ${fallback} | ${spec.doc} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
