import { generateEntityEvents } from '../test/support/generate-events';

/**
 * A data set for `bench/rebuild-check.ts` and `bench/replay.child.ts` outside the benches (which
 * make theirs in a temporary directory and delete it): `node -r @swc-node/register
 * bench/generate-events.ts <DATA_DIR> <count>` appends `count` events (entities created and
 * updated, in 50 accounts) to DATA_DIR/events.db, as the replay bench does.
 */
async function main(): Promise<void> {
  const [dataDir, count] = process.argv.slice(2);
  const events = Number(count);
  if (!dataDir || !Number.isInteger(events) || events <= 0)
    throw new Error('usage: generate-events.ts <DATA_DIR> <count>');
  const ms = await generateEntityEvents(dataDir, events);
  console.log(`${events} events appended to ${dataDir}/events.db in ${Math.round(ms)} ms`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
