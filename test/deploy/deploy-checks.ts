/**
 * What the shipped deployment files must hold (CONTRACT.md, the shipped docker-compose.yml), as
 * checks over their text: each returns the problems found, one line each, empty when none.
 * compose-files.spec.ts runs them on the real files and on broken variants of them.
 */
import ipaddr from 'ipaddr.js';
import { load } from 'js-yaml';

type Env = Record<string, string>;

interface Service {
  readonly name: string;
  readonly image: string;
  readonly env: Env;
  readonly ports: readonly unknown[];
  readonly addresses: readonly string[];
}

const NODE_IMAGE = /(^|\/)(eventstore|kurrentdb)(:|$)/;
const EDGE_IMAGE = /(^|\/)caddy(:|$)/;
/** `${NAME:?message}` or `${NAME?message}`: compose refuses to start without it; no default. */
const REQUIRED_VARIABLE = /^\$\{[A-Za-z_][A-Za-z0-9_]*:?\?[^}]*\}$/;

/** The secure cluster (docker-compose.yml). */
export function clusterComposeProblems(text: string): string[] {
  const services = composeServices(text);
  const problems = services.flatMap((s) => publishedBeyondLoopback(s));
  const nodes = services.filter((s) => NODE_IMAGE.test(s.image));
  const replicas = services.filter((s) => s.env.EVENT_STORE === 'esdb' || 'EVENTSTORE_CONNECTION_STRING' in s.env);
  const edge = services.find((s) => EDGE_IMAGE.test(s.image));
  if (nodes.length === 0) problems.push('no EventStoreDB node');
  if (replicas.length === 0) problems.push('no service replica on EventStoreDB');
  for (const node of nodes) problems.push(...insecureNode(node));
  for (const replica of replicas) problems.push(...replicaProblems(replica, edge));
  if (!edge) problems.push('no Caddy edge in front of the replicas');
  else problems.push(...edgeProblems(edge));
  return problems;
}

/** The development file (docker-compose.single.yml): may be insecure, but on this machine only. */
export function developmentComposeProblems(text: string): string[] {
  return composeServices(text).flatMap((s) => publishedBeyondLoopback(s, { edgeMayPublish: false }));
}

/** deploy/Caddyfile: every site served over HTTPS (HTTP only redirects there), with HSTS. */
export function caddyfileProblems(text: string): string[] {
  const problems: string[] = [];
  const { sites, globalOptions, body } = caddySites(text);
  if (sites.length === 0) problems.push('the Caddyfile serves no site');
  for (const address of sites) {
    const problem = plainHttpAddress(address);
    if (problem) problems.push(`the Caddyfile serves ${JSON.stringify(address)} ${problem}`);
  }
  if (/^\s*auto_https\s+(off|disable_redirects)\b/m.test(globalOptions)) {
    problems.push('the Caddyfile turns off automatic HTTPS or its HTTP→HTTPS redirects (auto_https)');
  }
  if (!/header\s+Strict-Transport-Security\s+"?max-age=[1-9]\d*/i.test(body)) {
    problems.push('the Caddyfile sends no Strict-Transport-Security (HSTS) header');
  }
  return problems;
}

function insecureNode(node: Service): string[] {
  const problems: string[] = [];
  if (/^(true|1|yes)$/i.test(node.env.EVENTSTORE_INSECURE ?? '')) {
    problems.push(`${node.name}: EVENTSTORE_INSECURE is on (no TLS, no authentication)`);
  }
  for (const name of ['EVENTSTORE_CERTIFICATE_FILE', 'EVENTSTORE_CERTIFICATE_PRIVATE_KEY_FILE']) {
    if (!node.env[name]) problems.push(`${node.name}: ${name} is not set (the node has no certificate)`);
  }
  const password = node.env.EVENTSTORE_DEFAULT_ADMIN_PASSWORD;
  if (!password || !REQUIRED_VARIABLE.test(password)) {
    problems.push(`${node.name}: EVENTSTORE_DEFAULT_ADMIN_PASSWORD must come from a required variable (\${NAME:?…})`);
  }
  return problems;
}

function replicaProblems(replica: Service, edge: Service | undefined): string[] {
  const problems: string[] = [];
  const connection = replica.env.EVENTSTORE_CONNECTION_STRING ?? '';
  // After `user:${PASSWORD:?message}@`, whose message may hold a `?` too.
  const hostsAndOptions = connection.replace(/^esdb(\+discover)?:\/\/[^@]*@/, '');
  const query = new URLSearchParams(hostsAndOptions.split('?')[1] ?? '');
  const lower = new Map([...query].map(([key, value]) => [key.toLowerCase(), value.toLowerCase()]));
  if (lower.get('tls') !== 'true') problems.push(`${replica.name}: EVENTSTORE_CONNECTION_STRING without tls=true`);
  if (lower.get('tlsverifycert') === 'false') {
    problems.push(`${replica.name}: EVENTSTORE_CONNECTION_STRING turns off certificate checks (tlsVerifyCert=false)`);
  }
  const credentials = /^esdb(\+discover)?:\/\/([^:@/]+):(\$\{[^}]+\})@/.exec(connection);
  if (!credentials || !REQUIRED_VARIABLE.test(credentials[3])) {
    problems.push(
      `${replica.name}: EVENTSTORE_CONNECTION_STRING without credentials from a required variable (esdb://user:\${NAME:?…}@…)`,
    );
  }
  const key = replica.env.SECRETS_KEY;
  if (!key || !REQUIRED_VARIABLE.test(key)) {
    problems.push(`${replica.name}: SECRETS_KEY must be a required variable with no default (\${SECRETS_KEY:?…})`);
  }
  problems.push(...trustProxyProblems(replica, edge));
  return problems;
}

function trustProxyProblems(replica: Service, edge: Service | undefined): string[] {
  const setting = (replica.env.TRUST_PROXY ?? '').trim();
  if (setting === '' || /^(false|off|0)$/i.test(setting)) {
    return [`${replica.name}: TRUST_PROXY is not set (behind Caddy every caller would share its address)`];
  }
  if (!edge) return [];
  if (edge.addresses.length === 0) return [`${edge.name}: no fixed address for TRUST_PROXY to name`];
  const ranges = setting.split(',').map((item) => item.trim());
  const covered = edge.addresses.every((address) => ranges.some((range) => inRange(address, range)));
  return covered
    ? []
    : [`${replica.name}: TRUST_PROXY (${setting}) does not name ${edge.name} (${edge.addresses.join(', ')})`];
}

function edgeProblems(edge: Service): string[] {
  const problems: string[] = [];
  const published = edge.ports.map((port) => parsePort(port)).flatMap((p) => (p.udp ? [] : [p.container]));
  for (const port of ['443', '80']) {
    if (!published.includes(port))
      problems.push(`${edge.name}: port ${port} is not published (HTTPS, and HTTP redirects)`);
  }
  const site = edge.env.SITE_ADDRESS ?? '';
  const fallback = /^\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}$/.exec(site)?.[1] ?? site;
  const problem = fallback ? plainHttpAddress(fallback) : null;
  if (problem) problems.push(`${edge.name}: SITE_ADDRESS ${JSON.stringify(fallback)} ${problem}`);
  return problems;
}

function publishedBeyondLoopback(service: Service, options = { edgeMayPublish: true }): string[] {
  if (options.edgeMayPublish && EDGE_IMAGE.test(service.image)) return [];
  return service.ports.flatMap((port) => {
    const { hostIp } = parsePort(port);
    if (hostIp !== null && isLoopback(hostIp)) return [];
    return [`${service.name}: port ${JSON.stringify(port)} is published beyond 127.0.0.1`];
  });
}

/** A compose port entry (short "[ip:]host:container[/proto]" or long syntax) → host IP and container port. */
function parsePort(port: unknown): { hostIp: string | null; container: string; udp: boolean } {
  if (typeof port === 'object' && port !== null) {
    const long = port as { target?: unknown; host_ip?: unknown; protocol?: unknown };
    const hostIp = typeof long.host_ip === 'string' ? long.host_ip : null;
    return { hostIp, container: String(long.target), udp: long.protocol === 'udp' };
  }
  const udp = String(port).endsWith('/udp');
  const text = String(port).replace(/\/(tcp|udp)$/, '');
  const ipv6 = /^\[([^\]]+)\]:(.*)$/.exec(text);
  const parts = (ipv6 ? ipv6[2] : text).split(':');
  const hostIp = ipv6 ? ipv6[1] : parts.length === 3 ? parts[0] : null;
  return { hostIp, container: parts[parts.length - 1], udp };
}

function isLoopback(address: string): boolean {
  return ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
}

function inRange(address: string, range: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (!range.includes('/')) return ipaddr.isValid(range) && ipaddr.process(range).toString() === parsed.toString();
  try {
    const [network, bits] = ipaddr.parseCIDR(range);
    return parsed.kind() === network.kind() && parsed.match(network, bits);
  } catch {
    return false;
  }
}

/** Why a Caddy site address is served over plain HTTP, or null. */
function plainHttpAddress(address: string): string | null {
  if (/^http:\/\//i.test(address)) return 'over plain HTTP (http://)';
  const port = /^(?:https?:\/\/)?[^/:]*:(\d+)$/.exec(address)?.[1];
  if (/^:\d+$/.test(address) && port !== '443') return `over plain HTTP (a bare port, :${port}, has no certificate)`;
  if (port === '80') return 'over plain HTTP (port 80)';
  return null;
}

function composeServices(text: string): Service[] {
  const document = load(text) as { services?: Record<string, Record<string, unknown>> } | null;
  return Object.entries(document?.services ?? {}).map(([name, spec]) => ({
    name,
    image: typeof spec.image === 'string' ? spec.image : '',
    env: environmentOf(spec.environment),
    ports: Array.isArray(spec.ports) ? (spec.ports as unknown[]) : [],
    addresses: Object.values((spec.networks ?? {}) as Record<string, { ipv4_address?: string } | null>)
      .map((network) => network?.ipv4_address)
      .filter((address): address is string => typeof address === 'string'),
  }));
}

function environmentOf(environment: unknown): Env {
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((item) => {
        const text = String(item);
        const eq = text.indexOf('=');
        return eq < 0 ? [text, ''] : [text.slice(0, eq), text.slice(eq + 1)];
      }),
    );
  }
  const env: Env = {};
  // Compose values are scalars: strings, numbers, booleans, or null for "from the host".
  for (const [key, value] of Object.entries((environment ?? {}) as Record<string, string | number | boolean | null>))
    env[key] = value === null ? '' : String(value);
  return env;
}

/** The site addresses of a Caddyfile's top-level blocks (`{$VAR:default}` read as its default), its global options and the rest. */
function caddySites(text: string): { sites: string[]; globalOptions: string; body: string } {
  const lines = text
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .map((line) =>
      line.replace(
        /\{\$([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g,
        (_, name: string, fallback?: string) => fallback ?? `$${name}`,
      ),
    )
    .map((line) => line.replace(/\{[^\s{}]+\}/g, 'placeholder'));
  const sites: string[] = [];
  let depth = 0;
  let globalOptions = '';
  let inGlobal = false;
  const body: string[] = [];
  for (const line of lines) {
    if (depth === 0 && line === '{') inGlobal = true;
    else if (depth === 0 && line.endsWith('{') && !line.startsWith('(')) {
      sites.push(
        ...line
          .slice(0, -1)
          .split(/[\s,]+/)
          .filter(Boolean),
      );
    }
    if (inGlobal) globalOptions += `${line}\n`;
    else body.push(line);
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    if (depth === 0) inGlobal = false;
  }
  return { sites, globalOptions, body: body.join('\n') };
}
