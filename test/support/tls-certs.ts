/**
 * A throwaway certificate authority and a server certificate for 127.0.0.1/localhost, made with
 * the system's openssl CLI (EC P-256: fast), for HTTPS receivers in tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  readonly dir: string;
  /** PEM of the CA: what WEBHOOK_CA_FILE points at. */
  readonly caFile: string;
  readonly caPem: string;
  /** Server certificate (signed by the CA) and its key, for 127.0.0.1 and localhost. */
  readonly cert: string;
  readonly key: string;
}

export function makeTestPki(name = 'Test'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'filing-pki-'));
  const p = (f: string) => join(dir, f);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '2',
    '-subj',
    `/CN=${name} Webhook CA`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', ...ec, '-keyout', p('leaf.key'), '-out', p('leaf.csr'), '-subj', '/CN=localhost');
  writeFileSync(
    p('leaf.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    p('leaf.csr'),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('leaf.crt'),
    '-days',
    '2',
    '-extfile',
    p('leaf.ext'),
  );
  return {
    dir,
    caFile: p('ca.crt'),
    caPem: readFileSync(p('ca.crt'), 'utf8'),
    cert: readFileSync(p('leaf.crt'), 'utf8'),
    key: readFileSync(p('leaf.key'), 'utf8'),
  };
}
