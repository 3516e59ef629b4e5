/**
 * The service under load for `npm run bench -- auth`, in its own process: the whole app (sqlite
 * store, temp DATA_DIR) plus the probe routes, one provisioned customer client. Prints one JSON
 * line `{url, clientId, clientSecret, token}` on stdout, then serves until SIGTERM.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@filing/platform';
import { createApp } from '../apps/service/src/bootstrap';
import { UNREACHABLE_RATE_LIMIT } from './report';
import { provisionAccount } from '../test/support/auth';
import { ProbeModule } from '../test/support/probe.module';

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-auth-'));
  const config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    EVENT_STORE: 'sqlite',
    API_RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
  });
  const app = await createApp(config, { imports: [ProbeModule] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  const service = { url, app, dataDir, close: () => app.close(), destroy: () => app.close() };
  const client = await provisionAccount(service);
  process.stdout.write(
    JSON.stringify({ url, clientId: client.clientId, clientSecret: client.clientSecret, token: client.token }) + '\n',
  );
  process.once('SIGTERM', () => {
    void app.close().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
