import { Logger } from '@nestjs/common';
import { ConfigError, loadConfig } from '@filing/platform';
import { createApp } from './bootstrap';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const app = await createApp(config);
  await app.listen({ port: config.port, host: '0.0.0.0' });
  new Logger('Bootstrap').log(
    `Listening on ${await app.getUrl()} (event store: ${config.eventStore.kind}, data: ${config.dataDir})`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
