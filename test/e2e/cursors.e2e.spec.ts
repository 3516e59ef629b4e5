/**
 * Pagination cursors are signed with a key kept in DATA_DIR/cursor.key (CONTRACT.md conventions:
 * "a cursor that is not one the service issued is a 400"), over real HTTP: a cursor survives a
 * restart on the same DATA_DIR, a service on another DATA_DIR refuses it, and the key shows up
 * in no log line and no other file.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expectProblem, resourceApi } from '../support/api';
import { provisionAccount, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';

describe('pagination cursors across restarts and DATA_DIRs', () => {
  let service: TestService;
  let other: TestService | undefined;
  let owner: ProvisionedClient;
  const logs: string[] = [];
  const logDestination = { write: (line: string) => void logs.push(line) };
  const api = resourceApi(() => service);

  beforeAll(async () => {
    service = await startService({ logDestination, env: { LOG_LEVEL: 'trace' } });
    owner = await provisionAccount(service);
    for (const name of ['One', 'Two', 'Three']) await api.create(owner, '/entities', { name, entity_type: 'llc' });
  }, 60_000);
  afterAll(async () => {
    await other?.destroy();
    await service?.destroy();
  });

  const firstPage = async () => {
    const res = await api.call(owner, 'GET', '/entities?limit=1');
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toEqual(expect.any(String));
    return res.body as { data: Array<{ name: string }>; next_cursor: string };
  };

  it('keeps the key in DATA_DIR/cursor.key: 32 bytes, readable by the owner only', () => {
    const file = join(service.dataDir, 'cursor.key');
    expect(readFileSync(file)).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(service.dataDir).filter((name) => name.startsWith('cursor.key'))).toEqual(['cursor.key']);
  });

  it('a cursor stays good across a restart on the same DATA_DIR, with the same key', async () => {
    const key = readFileSync(join(service.dataDir, 'cursor.key'));
    const { next_cursor } = await firstPage();
    await service.close();
    service = await startService({ reuse: service, logDestination, env: { LOG_LEVEL: 'trace' } });
    expect(readFileSync(join(service.dataDir, 'cursor.key'))).toEqual(key);
    const res = await api.call(owner, 'GET', `/entities?limit=1&cursor=${next_cursor}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { name: string }) => e.name)).toEqual(['Two']);
  }, 60_000);

  it('a service on another DATA_DIR refuses it (400 naming cursor), while this one, running beside it, still takes it', async () => {
    other = await startService();
    const stranger = await provisionAccount(other);
    await resourceApi(() => other!).create(stranger, '/entities', { name: 'Elsewhere', entity_type: 'llc' });
    expect(readFileSync(join(other.dataDir, 'cursor.key'))).not.toEqual(
      readFileSync(join(service.dataDir, 'cursor.key')),
    );

    const { next_cursor } = await firstPage();
    expectProblem(await resourceApi(() => other!).call(stranger, 'GET', `/entities?cursor=${next_cursor}`), 400, [
      'cursor',
    ]);
    // Each app has its own key: starting the other one changed nothing here.
    expect((await api.call(owner, 'GET', `/entities?limit=1&cursor=${next_cursor}`)).status).toBe(200);
  }, 60_000);

  it('the key is in no log line, and in no other file of DATA_DIR (events, read models)', () => {
    const key = readFileSync(join(service.dataDir, 'cursor.key'));
    const files = readdirSync(service.dataDir, { recursive: true, encoding: 'utf8' })
      .map((name) => join(service.dataDir, name))
      .filter((path) => statSync(path).isFile() && !path.endsWith('cursor.key'));
    expect(files.some((path) => path.includes('events.db'))).toBe(true);
    expect(logs.length).toBeGreaterThan(0);
    for (const text of [logs.join('\n'), ...files.map((path) => readFileSync(path).toString('latin1'))]) {
      for (const form of [
        key.toString('hex'),
        key.toString('base64'),
        key.toString('base64url'),
        key.toString('latin1'),
      ]) {
        expect(text.includes(form)).toBe(false);
      }
    }
  });
});
