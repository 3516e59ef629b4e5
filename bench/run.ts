/**
 * `npm run bench -- <name...>`: runs the named benchmarks (all when none is named). Each prints
 * its figure next to a baseline measured in the same run, on this machine.
 */
import { apiBench } from './api.bench';
import { authBench } from './auth.bench';
import { memoryBench, replayBench } from './replay.bench';
import { storeBench } from './store.bench';
import { webhooksBench } from './webhooks.bench';

const benches: Record<string, () => Promise<void>> = {
  store: storeBench,
  auth: authBench,
  api: apiBench,
  webhooks: webhooksBench,
  replay: replayBench,
  memory: memoryBench,
};

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !(n in benches));
  if (unknown.length > 0) {
    console.error(`Unknown bench: ${unknown.join(', ')}. Known: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  for (const name of names.length > 0 ? names : Object.keys(benches)) {
    console.log(`\n== ${name} ==`);
    await benches[name]();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
