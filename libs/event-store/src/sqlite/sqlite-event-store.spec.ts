import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventStoreConformance } from '../testing/conformance';
import { SqliteEventStore } from './sqlite-event-store';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-store-'));
const file = join(dir, 'events.db');

describeEventStoreConformance('sqlite', {
  serverBacked: false,
  sharedByInstances: false,
  setup: async () => ({
    store: new SqliteEventStore({ file, pollIntervalMs: 50 }),
    openAnother: async () => new SqliteEventStore({ file, pollIntervalMs: 50 }),
  }),
  teardown: async () => rmSync(dir, { recursive: true, force: true }),
});
