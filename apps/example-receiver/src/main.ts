/**
 * The example receiver as a process:
 *
 *   WEBHOOK_SECRETS=whsec_... PORT=4000 [TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem] \
 *   [DEDUPE_DB=./dedupe.db] node dist/apps/example-receiver/apps/example-receiver/src/main.js
 *
 * WEBHOOK_SECRETS holds one secret, or several separated by spaces or commas (during a rotation).
 * With DEDUPE_DB, processed webhook-ids survive restarts (SQLite); otherwise they live in memory.
 */
import { SqliteDedupeStore } from '@filing/client/dedupe-sqlite';
import { readFileSync } from 'node:fs';
import { createReceiver } from './receiver';

function main(): void {
  const secrets = (process.env.WEBHOOK_SECRETS ?? '').split(/[\s,]+/).filter(Boolean);
  if (secrets.length === 0) {
    console.error('WEBHOOK_SECRETS is required: the endpoint signing secret(s), whsec_…');
    process.exit(2);
  }
  const port = Number(process.env.PORT ?? 4000);
  const certFile = process.env.TLS_CERT_FILE;
  const keyFile = process.env.TLS_KEY_FILE;
  const tls = certFile && keyFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : undefined;
  const store = process.env.DEDUPE_DB ? new SqliteDedupeStore({ database: process.env.DEDUPE_DB }) : undefined;

  const server = createReceiver({ secrets, store, tls, path: process.env.WEBHOOK_PATH });
  server.listen(port, process.env.HOST ?? '0.0.0.0', () => {
    console.log(
      `example receiver listening on ${tls ? 'https' : 'http'}://${process.env.HOST ?? '0.0.0.0'}:${port}${process.env.WEBHOOK_PATH ?? '/webhooks'}`,
    );
  });
  const stop = () =>
    server.close(() => {
      store?.close();
      process.exit(0);
    });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
