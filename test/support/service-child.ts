/**
 * The service as a child process for whole-service tests (test/support/cluster.ts): the
 * configuration from the environment as in main.ts, but listening on 127.0.0.1 only, and on the
 * port the OS chooses when PORT=0, announced on stdout as `SERVICE_LISTENING <port>`. It exits
 * when its stdin closes, so it never outlives the test process, whatever kills that.
 */
import { EventStoreAccessError } from '@filing/event-store';
import { loadConfig } from '@filing/platform';
import { createApp } from '../../apps/service/src/bootstrap';

export const LISTENING_MARKER = 'SERVICE_LISTENING';

async function main(): Promise<void> {
  process.stdin.on('end', () => process.exit(1));
  process.stdin.resume();
  const app = await createApp(loadConfig(process.env));
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  process.stdout.write(`${LISTENING_MARKER} ${address.port}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    // As main.ts: a refusal by the store is one line.
    console.error(err instanceof EventStoreAccessError ? err.message : err);
    process.exit(1);
  });
}
