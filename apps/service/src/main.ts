import { Logger } from '@nestjs/common';
import { EventStoreAccessError } from '@filing/event-store';
import { ConfigError, loadConfig } from '@filing/platform';
import { createApp } from './bootstrap';
import { DataDirLockedError } from './data-dir-lock';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const app = await createApp(config);
  await app.listen({ port: config.port, host: '0.0.0.0' });
  new Logger('Bootstrap').log(
    `Listening on ${await app.getUrl()} (event store: ${config.eventStore.kind}, data: ${config.dataDir})`,
  );
}

main().catch((err: unknown) => {
  // What an operator must fix gets its message alone; anything else its stack.
  const operatorMustFix =
    err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof EventStoreAccessError;
  console.error(operatorMustFix ? err.message : err);
  process.exit(1);
});
