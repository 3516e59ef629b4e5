import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
// The client's own parser (what EventStoreDBClient.connectionString runs first), without the client:
// no channel, no connection. The package exports it from no index, hence the dist path.
import { parseConnectionString } from '@eventstore/db-client/dist/Client/parseConnectionString';

/** The option keys @eventstore/db-client 6 knows; it matches them ignoring case, `_` and `-`. */
const KNOWN_OPTIONS = [
  'connectionName',
  'defaultDeadline',
  'discoveryInterval',
  'gossipTimeout',
  'keepAliveInterval',
  'keepAliveTimeout',
  'maxDiscoverAttempts',
  'nodePreference',
  'throwOnAppendFailure',
  'tls',
  'tlsCAFile',
  'tlsVerifyCert',
  'userCertFile',
  'userKeyFile',
];
const flat = (key: string): string => key.trim().toLowerCase().replace(/[_-]/g, '');
const KNOWN_FLAT = new Set(KNOWN_OPTIONS.map(flat));
const EXAMPLE = 'e.g. esdb://localhost:2113?tls=false';
/** A DNS name or an IPv4 address (the client splits on `:`, so no IPv6 literals). */
const HOST_NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/**
 * What is wrong with an EventStoreDB connection string, or null when the client accepts it and
 * everything it names is usable: the client's own parser (which throws a ParseError at start
 * otherwise), then what it lets through and fails later: host names with spaces, ports that are
 * not a number from 1 to 65535, option keys it would ignore, `tlsVerifyCert=false` (no effect in
 * this client), and certificate files that are missing or not PEM. Opens no connection. The text
 * never repeats the credentials of `user:password@`.
 */
export function connectionStringProblem(text: string): string | null {
  const trimmed = text.trim();
  const parts = splitConnectionString(trimmed);
  if (typeof parts === 'string') return parts;
  const early = optionsProblem(parts.query);
  if (early) return early;
  let options: ClientOptions;
  try {
    options = parseConnectionString(trimmed);
  } catch (err) {
    return `is not a valid connection string: ${(err as Error).message.replace(/\.$/, '')} (${EXAMPLE})`;
  }
  return hostsProblem(parts.hostList) ?? caFileProblem(options) ?? userCertificateProblem(options);
}

type ClientOptions = ReturnType<typeof parseConnectionString>;

/** The host list and the query, credentials left out; or what is wrong with the scheme or hosts. */
function splitConnectionString(trimmed: string): { hostList: string; query: string } | string {
  const scheme = /^(esdb|esdb\+discover):\/\//.exec(trimmed);
  if (!scheme) {
    const given = /^[^:/?@]*:\/\//.exec(trimmed)?.[0];
    return `must start with esdb:// or esdb+discover:// (${given ? `got ${JSON.stringify(given)}` : 'it has no scheme'}; ${EXAMPLE})`;
  }
  let rest = trimmed.slice(scheme[0].length).replace(/\/+$/, '');
  const credentials = /^[^:]+:[^@]+@/.exec(rest);
  if (credentials) rest = rest.slice(credentials[0].length);
  const queryAt = rest.indexOf('?');
  const hostList = (queryAt < 0 ? rest : rest.slice(0, queryAt)).replace(/\/+$/, '');
  const query = queryAt < 0 ? '' : rest.slice(queryAt + 1);
  if (hostList === '') return `names no host (${EXAMPLE})`;
  return { hostList, query };
}

/** Option keys the client would ignore, and `tlsVerifyCert=false` (no effect in this client). */
function optionsProblem(query: string): string | null {
  for (const pair of query.split('&')) {
    const key = pair.split('=')[0];
    if (!key || !pair.includes('=')) continue; // the parser names malformed pairs below
    if (!KNOWN_FLAT.has(flat(key))) {
      return `has an unknown option ${JSON.stringify(key)}, which the client would ignore (options: ${KNOWN_OPTIONS.join(', ')})`;
    }
    if (flat(key) === 'tlsverifycert' && pair.slice(pair.indexOf('=') + 1).trim() === 'false') {
      return "has tlsVerifyCert=false, which @eventstore/db-client 6 does not support (the server certificate would still be verified): remove it and name the server's CA with tlsCAFile=<file>";
    }
  }
  return null;
}

/** Host names with spaces and ports out of range, which the client lets through. */
function hostsProblem(hostList: string): string | null {
  for (const host of hostList.split(/[,/]/).filter(Boolean)) {
    const [address, port, ...extra] = host.trim().split(':');
    if (!HOST_NAME.test(address) || extra.length > 0) {
      return `has a host that is not a host name or IPv4 address: ${JSON.stringify(host)}`;
    }
    if (port !== undefined && (!/^\d{1,5}$/.test(port.trim()) || Number(port) < 1 || Number(port) > 65_535)) {
      return `has a port that is not a number from 1 to 65535: ${JSON.stringify(host)}`;
    }
  }
  return null;
}

function caFileProblem(options: ClientOptions): string | null {
  if (options.tls === false || !options.tlsCAFile) return null;
  const problem = pemProblem(options.tlsCAFile, 'certificate');
  return problem ? `tlsCAFile ${problem}` : null;
}

function userCertificateProblem(options: ClientOptions): string | null {
  if (Boolean(options.userCertFile) !== Boolean(options.userKeyFile)) {
    return 'has userCertFile without userKeyFile or the other way round: the client needs both';
  }
  if (!options.userCertFile || !options.userKeyFile) return null;
  const certProblem = pemProblem(options.userCertFile, 'certificate');
  if (certProblem) return `userCertFile ${certProblem}`;
  const keyProblem = pemProblem(options.userKeyFile, 'key');
  return keyProblem ? `userKeyFile ${keyProblem}` : null;
}

/** Files named in the string resolve against the working directory, as the client resolves them. */
function pemProblem(file: string, kind: 'certificate' | 'key'): string | null {
  const path = resolve(file);
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    return `names a file that cannot be read: ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    if (kind === 'certificate') {
      if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no -----BEGIN CERTIFICATE----- block');
      new X509Certificate(pem);
    } else {
      createPrivateKey(pem);
    }
    return null;
  } catch (err) {
    return `names a file that is not a PEM ${kind === 'key' ? 'private key' : 'certificate'}: ${path} (${(err as Error).message})`;
  }
}
