import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionStringProblem } from './connection-string';

describe('connectionStringProblem', () => {
  let dir: string;
  const p = (name: string) => join(dir, name);
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'esdb-cs-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        p('user.key'),
        '-out',
        p('ca.crt'),
        '-days',
        '2',
        '-subj',
        '/CN=test',
      ],
      { stdio: 'pipe' },
    );
    writeFileSync(p('text.txt'), 'not a certificate\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    'esdb://localhost:2113?tls=false',
    'esdb://localhost?tls=false',
    'esdb://admin:changeit@localhost:2113',
    'esdb://node1.example:2113,node2.example:2113,10.0.0.3:2113?nodePreference=leader&TLS=true',
    'esdb+discover://cluster.example:2113?keep_alive_interval=10000&maxDiscoverAttempts=3',
    'esdb://localhost:2113/?tls=false',
    'esdb://eventstore_db:2113?tls=false',
  ])('accepts %j', (text) => {
    expect(connectionStringProblem(text)).toBeNull();
  });

  it('accepts certificate files that exist and parse', () => {
    expect(connectionStringProblem(`esdb://localhost:2113?tlsCAFile=${p('ca.crt')}`)).toBeNull();
    expect(
      connectionStringProblem(`esdb://localhost:2113?userCertFile=${p('ca.crt')}&userKeyFile=${p('user.key')}`),
    ).toBeNull();
    // With tls=false the client never reads tlsCAFile.
    expect(connectionStringProblem('esdb://localhost:2113?tls=false&tlsCAFile=/nonexistent.pem')).toBeNull();
  });

  it.each([
    ['esdb://', 'names no host (e.g. esdb://localhost:2113?tls=false)'],
    ['esdb://admin:secret@', 'names no host (e.g. esdb://localhost:2113?tls=false)'],
    [
      'localhost:2113',
      'must start with esdb:// or esdb+discover:// (it has no scheme; e.g. esdb://localhost:2113?tls=false)',
    ],
    [
      'kurrentdb://localhost:2113',
      'must start with esdb:// or esdb+discover:// (got "kurrentdb://"; e.g. esdb://localhost:2113?tls=false)',
    ],
    [
      'esdb://host:2113?tls=maybe',
      'is not a valid connection string: Unexpected "maybe" at position 21, expected true or false (e.g. esdb://localhost:2113?tls=false)',
    ],
    [
      'esdb://localhost:2113?tls',
      'is not a valid connection string: Unexpected "?" at position 21, expected ?key=value (e.g. esdb://localhost:2113?tls=false)',
    ],
    [
      'esdb://a:1:2',
      'is not a valid connection string: Unexpected ":2" at position 10, expected , or ?key=value (e.g. esdb://localhost:2113?tls=false)',
    ],
    [
      'esdb://localhost:2113?nodePreference=nearest',
      expect.stringMatching(/^is not a valid connection string: Unexpected "nearest" .*expected leader or follower/),
    ],
    ['esdb://local host:2113', 'has a host that is not a host name or IPv4 address: "local host:2113"'],
    ['esdb://localhost:21x3', 'has a port that is not a number from 1 to 65535: "localhost:21x3"'],
    ['esdb://localhost:99999', 'has a port that is not a number from 1 to 65535: "localhost:99999"'],
    [
      'esdb://localhost:2113?tsl=false',
      expect.stringMatching(/^has an unknown option "tsl", which the client would ignore \(options: connectionName, /),
    ],
    [
      'esdb://localhost:2113?tlsVerifyCert=false',
      expect.stringMatching(/^has tlsVerifyCert=false, which @eventstore\/db-client 6 does not support/),
    ],
    [
      'esdb://localhost:2113?tlsCAFile=/nonexistent/ca.pem',
      'tlsCAFile names a file that cannot be read: /nonexistent/ca.pem (ENOENT)',
    ],
    [
      'esdb://localhost:2113?userCertFile=/x.crt',
      'has userCertFile without userKeyFile or the other way round: the client needs both',
    ],
  ])('refuses %j', (text, problem) => {
    expect(connectionStringProblem(text)).toEqual(problem);
  });

  it('refuses certificate files that are not PEM', () => {
    expect(connectionStringProblem(`esdb://localhost:2113?tlsCAFile=${p('text.txt')}`)).toBe(
      `tlsCAFile names a file that is not a PEM certificate: ${p('text.txt')} (no -----BEGIN CERTIFICATE----- block)`,
    );
    expect(
      connectionStringProblem(`esdb://localhost:2113?userCertFile=${p('ca.crt')}&userKeyFile=${p('ca.crt')}`),
    ).toMatch(/^userKeyFile names a file that is not a PEM private key: /);
  });

  it("never repeats the credentials, and leaves the client's console warnings out", () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      for (const text of [
        'esdb://admin:s3cret@local host:2113',
        'esdb://admin:s3cret@localhost:2113?tsl=false',
        'esdb://admin:s3cret@localhost:2113?tls=maybe',
      ]) {
        expect(connectionStringProblem(text)).not.toContain('s3cret');
      }
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
