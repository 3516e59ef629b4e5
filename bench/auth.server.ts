/**
 * The service under load for `npm run bench -- auth`, in its own process: the whole app (sqlite
 * store, temp DATA_DIR) plus the probe routes, one provisioned customer client. Prints one JSON
 * line `{url, clientId, clientSecret, token}` on stdout, then serves until SIGTERM.
 */
import { serveUntilSigterm, startBenchService } from './bench-service';

async function main(): Promise<void> {
  const service = await startBenchService('auth', { probes: true });
  const { url, client } = service;
  serveUntilSigterm(service, {
    url,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    token: client.token,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
