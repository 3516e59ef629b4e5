/**
 * The service's configuration, declared: one entry per environment variable with its default, its
 * line in the README's table and its parser. `loadConfig` runs the parsers, the README's table and
 * the CLI's help are produced from the same entries (a spec fails when the README drifts).
 * A parser gets the trimmed value (the default when unset or blank) and throws a message without
 * the variable's name (`must be …`), or a `ConfigProblem` whose lines name their variables.
 */
import { resolve } from 'node:path';
import { connectionStringProblem } from '@filing/event-store';
import { ServiceKeys } from '../crypto/service-keys';
import { directoryProblem } from './directory-check';
import { fileValue, integerIn, oneOf, parseDuration, parseDurations, parseRateLimit, yesNo } from './parsers';
import { parsePublicUrl } from './public-url';
import { parseTrustProxy } from './trust-proxy';
import { certificatesProblem, decodeBase64Key, SECRETS_KEY_HINT, tlsPairProblems } from './parsers';

/** Several problems at once, each a whole line that names its variable. */
export class ConfigProblem extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('; '));
  }
}

/** The other variables' values, as a parser may need them (trimmed; undefined when unset or blank). */
export type ConfigInput = (name: string) => string | undefined;

export interface ConfigVariable<T> {
  /** As shown in the README's table when it is not the key alone (a pair read together). */
  readonly title?: string;
  readonly default?: string;
  /** The README's "default" cell when the default depends on other variables (the parser applies it). */
  readonly defaultDoc?: string;
  /** The README's "meaning" cell (Markdown, one line). */
  readonly doc: string;
  readonly parse: (value: string | undefined, input: ConfigInput) => T;
}

const variable = <T>(spec: ConfigVariable<T>): ConfigVariable<T> => spec;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A longer WEBHOOK_DISABLE_AFTER is more likely a typo than a wish. */
const MAX_DISABLE_AFTER_MS = 365 * 86_400_000;
export const DEFAULT_RETRY_DELAYS = '10s,1m,5m,30m,2h,6h,12h,24h';
export const DEFAULT_API_RATE_LIMIT = '100/1s';
export const DEFAULT_WEBHOOK_DISABLE_AFTER = '5d';
export const DEFAULT_WEBHOOK_FAILING_AFTER = '1h';

// A table: one entry per variable, in the README's order.
export const CONFIG_VARIABLES = {
  PORT: variable({ default: '3000', doc: 'HTTP(S) port', parse: integerIn(0, 65535) }),
  EVENT_STORE: variable({
    default: 'sqlite',
    doc: '`sqlite` (embedded) or `esdb` (EventStoreDB)',
    parse: (value) => {
      if (value === 'sqlite' || value === 'esdb') return value;
      throw new Error(`must be sqlite or esdb (got ${JSON.stringify(value)})`);
    },
  }),
  DATA_DIR: variable({
    default: './data',
    doc: "`events.db` (sqlite store), `read.db` (read models, both stores), and, without `SECRETS_KEY`, `cursor.key` (the root key in its place: signs pagination cursors, derives the settings sign-in form's CSRF key and the key sealing webhook signing secrets; made on first start, mode 0600: back it up with the data — without it, cursors handed out earlier are a 400 and clients start again from the first page, and every webhook endpoint needs a secret rotation); `service.lock` and `service.pid`: one service process per DATA_DIR, a second start exits 1 naming the running one",
    parse: (value) => {
      const dir = resolve(value ?? './data');
      const problem = directoryProblem(dir);
      if (problem) throw new Error(problem);
      return dir;
    },
  }),
  EVENTSTORE_CONNECTION_STRING: variable({
    doc: 'required with `EVENT_STORE=esdb`, e.g. `esdb://localhost:2113?tls=false`',
    parse: (value, input) => {
      if (input('EVENT_STORE') !== 'esdb') return '';
      if (!value) throw new Error('is required when EVENT_STORE=esdb (e.g. esdb://localhost:2113?tls=false)');
      const problem = connectionStringProblem(value);
      if (problem) throw new Error(problem);
      return value;
    },
  }),
  SECRETS_KEY: variable({
    doc: 'base64 of 32 random bytes (`openssl rand -base64 32`); **required with `EVENT_STORE=esdb`**, the same on every instance: the root of the cursor-signing and sign-in CSRF keys and of the key that encrypts secrets kept in events. Optional with sqlite (then `DATA_DIR/cursor.key`). Never logged; a bad value is named, never shown',
    parse: (value, input) => secretsKey(value, input('SECRETS_KEY_PREVIOUS'), input('EVENT_STORE') === 'esdb'),
  }),
  SECRETS_KEY_PREVIOUS: variable({
    doc: 'the key being rotated out: still accepted for opening secrets and checking cursors (docs/operations.md, "Running several instances")',
    // Read and checked with SECRETS_KEY, which it only makes sense beside.
    parse: () => undefined,
  }),
  TOKEN_TTL_SECONDS: variable({ default: '3600', doc: 'access-token lifetime, 1–3600', parse: integerIn(1, 3600) }),
  WEBHOOK_RETRY_DELAYS: variable({
    default: DEFAULT_RETRY_DELAYS,
    doc: 'retry schedule; units `ms`, `s`, `m`, `h`, `d`',
    parse: (value) => parseDurations(value!),
  }),
  WEBHOOK_DISABLE_AFTER: variable({
    default: DEFAULT_WEBHOOK_DISABLE_AFTER,
    doc: 'an endpoint whose attempts have all failed for this long is disabled (`disabled_reason: failing`); one duration, 1 ms to 365 d',
    parse: (value) => parseDuration(value!, MAX_DISABLE_AFTER_MS),
  }),
  WEBHOOK_FAILING_AFTER: variable({
    default: DEFAULT_WEBHOOK_FAILING_AFTER,
    doc: "an endpoint whose attempts have all failed for this long is reported once per failing streak as `webhook_endpoint.failing` (to the account's endpoints that list it); one duration, 1 ms to 365 d",
    parse: (value) => parseDuration(value!, MAX_DISABLE_AFTER_MS),
  }),
  WEBHOOK_TIMEOUT_MS: variable({ default: '10000', doc: 'per delivery attempt', parse: integerIn(1, 120_000) }),
  WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT: variable({
    default: '16',
    doc: 'endpoints an account may have (deleted ones do not count), 1–1000; the next create is a 409 (docs/webhooks.md)',
    parse: integerIn(1, 1_000),
  }),
  WEBHOOK_CLAIM_CLOCK_SKEW_MS: variable({
    default: '1000',
    doc: 'how far apart instances\' clocks may be, 0–2000: a claimed delivery is sent only if its request, at `WEBHOOK_TIMEOUT_MS`, ends this long before the claim\'s lease (docs/webhooks.md, "Several instances")',
    parse: integerIn(0, 2_000),
  }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: variable({
    default: 'false',
    doc: 'allow webhook URLs resolving to loopback/private addresses (tests only)',
    parse: yesNo,
  }),
  WEBHOOK_CA_FILE: variable({
    doc: 'extra CA certificate (PEM) trusted for webhook receivers',
    parse: (value) => {
      const file = fileValue(value);
      const problem = file && certificatesProblem(file);
      if (problem) throw new Error(problem);
      return file;
    },
  }),
  TLS_CERT_FILE: variable({
    title: '`TLS_CERT_FILE`, `TLS_KEY_FILE`',
    doc: 'serve HTTPS directly (both or neither); otherwise plain HTTP behind a TLS proxy',
    parse: (value, input) => tlsPair(value, input('TLS_KEY_FILE')),
  }),
  LOG_LEVEL: variable({
    default: 'info',
    doc: LOG_LEVELS.map((level) => `\`${level}\``).join(', '),
    parse: oneOf(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`),
  }),
  READY_MAX_LAG: variable({
    defaultDoc: '`10000` (sqlite), `16000000` (esdb)',
    doc: '`/readyz` is 503 while a running stream processor is further behind the store\'s head than this, in log positions: events with sqlite, bytes of log with EventStoreDB (docs/operations.md, "Readiness")',
    parse: (value, input) =>
      value === undefined ? (input('EVENT_STORE') === 'esdb' ? 16_000_000 : 10_000) : integerIn(0, 1e15)(value),
  }),
  TRUST_PROXY: variable({
    default: 'off',
    doc: 'which peers may report the client (`X-Forwarded-For`, `-Proto`) for the per-address brakes and `Secure` cookies: addresses/CIDRs (`172.30.240.20`, `10.0.0.0/8`), a hop count, or `true` (docs/operations.md, "Behind a proxy")',
    parse: parseTrustProxy,
  }),
  API_RATE_LIMIT: variable({
    default: DEFAULT_API_RATE_LIMIT,
    doc: 'requests per account to `/external-api/v1` in a sliding window (`<n>/<duration>`, e.g. `6000/1m`), or `off`',
    parse: (value) => parseRateLimit(value!),
  }),
  PUBLIC_URL: variable({
    doc: "the origin clients use (`https://api.example.com`; http(s), no path): the absolute URLs of the discovery metadata at `/.well-known/oauth-authorization-server`, never taken from a request's Host header; unset: `http://localhost:<port>`. Set it behind any proxy (docs/credentials.md)",
    parse: parsePublicUrl,
  }),
};

export type ConfigValues = {
  -readonly [K in keyof typeof CONFIG_VARIABLES]: ReturnType<(typeof CONFIG_VARIABLES)[K]['parse']>;
};

/** TLS_CERT_FILE and TLS_KEY_FILE: both or neither, each parses, and the key is the certificate's. */
function tlsPair(certValue: string | undefined, keyValue: string | undefined) {
  const lines: string[] = [];
  const file = (name: string, value: string | undefined) => {
    try {
      return fileValue(value);
    } catch (err) {
      lines.push(`${name} ${(err as Error).message}`);
      return null;
    }
  };
  const [certFile, keyFile] = [file('TLS_CERT_FILE', certValue), file('TLS_KEY_FILE', keyValue)];
  if (Boolean(certValue) !== Boolean(keyValue)) lines.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  else if (certFile && keyFile) lines.push(...tlsPairProblems(certFile, keyFile));
  if (lines.length > 0) throw new ConfigProblem(lines);
  return certFile && keyFile ? { certFile, keyFile } : null;
}

/** SECRETS_KEY (and SECRETS_KEY_PREVIOUS) as ServiceKeys; problems never repeat a value: it is a secret. */
function secretsKey(current: string | undefined, previous: string | undefined, required: boolean) {
  const lines: string[] = [];
  const decode = (name: string, text: string): Buffer | null => {
    const key = decodeBase64Key(text);
    if (typeof key === 'string') lines.push(`${name} must be ${SECRETS_KEY_HINT} (${key})`);
    return typeof key === 'string' ? null : key;
  };
  if (current === undefined) {
    if (required)
      lines.push(`SECRETS_KEY is required when EVENT_STORE=esdb, the same on every instance: ${SECRETS_KEY_HINT}`);
    if (previous !== undefined)
      lines.push('SECRETS_KEY_PREVIOUS is set without SECRETS_KEY: set SECRETS_KEY to the new key');
  }
  const key = current === undefined ? null : decode('SECRETS_KEY', current);
  const old = previous === undefined || current === undefined ? null : decode('SECRETS_KEY_PREVIOUS', previous);
  if (lines.length > 0) throw new ConfigProblem(lines);
  return key ? ServiceKeys.fromSecretsKey(key, old) : null;
}
