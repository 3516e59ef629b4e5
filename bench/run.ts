/**
 * `npm run bench -- <name...>`: runs the named benchmarks (all when none is named). Each prints
 * its figure next to a baseline measured in the same run, on this machine.
 */
import { apiBench } from './api.bench';
import { authBench } from './auth.bench';
import { contentBench } from './content.bench';
import { memoryBench, replayBench } from './replay.bench';
import { storeBench } from './store.bench';
import { webhooksBench } from './webhooks.bench';
import { writeBench } from './write.bench';

const benches: Record<string, () => Promise<void>> = {
  store: storeBench,
  auth: authBench,
  api: apiBench,
  webhooks: webhooksBench,
  replay: replayBench,
  write: writeBench,
  memory: memoryBench,
  content: contentBench,
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

let finished = false;
// A bench awaiting something that holds no handle would otherwise end the run silently, exit 0.
process.on('beforeExit', () => {
  if (finished) return;
  console.error('bench: the event loop emptied before the benchmarks finished');
  process.exit(1);
});

main().then(
  () => (finished = true),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
