import {
  type EventStore,
  type SubscriptionFilter,
  type JsonObject,
  NO_STREAM,
  type RecordedEvent,
  WrongExpectedVersionError,
} from '@filing/event-store';
import { randomBytes, randomUUID } from 'node:crypto';
import type { SecretBox } from './secret-box';

/**
 * Data keys in key streams of their own (crypto-shredding; Axon's Data Protection is the model):
 * one random 256-bit key per thing that may have to disappear (a document's content), sealed
 * under SECRETS_KEY with the SecretBox and bound to its stream's name, so a sealed key cannot be
 * moved to another stream. What the key encrypts lives elsewhere (e.g. a content stream); the
 * key stream holds nothing but versions of the one sealed key:
 *
 * - destroying the thing tombstones the key stream (`destroy`): every copy of the ciphertext, in
 *   the log, in exports and in backups made afterwards, has no key any more;
 * - rotating SECRETS_KEY re-seals the same key under the new root and truncates the older
 *   versions (`reseal`): nothing sealed under the retired root stays in the live store.
 *
 * Nothing here holds a key longer than a call, logs one, or puts one in an error.
 */
export const DATA_KEY_SEALED = 'keys.DataKeySealed';

/** The sealed key: `v1.<key id>.<…>` (secret-box.ts), bound to the key stream's name. */
export type DataKeySealedData = { readonly key_sealed: string };

export type ResealOutcome = 'resealed' | 'current' | 'destroyed';

const DATA_KEY_BYTES = 32;

export class KeyStreams {
  constructor(
    private readonly store: EventStore,
    private readonly box: SecretBox,
  ) {}

  /**
   * The stream's key, made and appended now when it has none. An existing one (an interrupted
   * write being retried) is returned as it is. StreamDeletedError once the stream is destroyed.
   */
  async openOrCreate(streamId: string, metadata: JsonObject): Promise<Buffer> {
    const existing = await this.open(streamId);
    if (existing) return existing;
    const key = randomBytes(DATA_KEY_BYTES);
    try {
      await this.store.appendToStream(streamId, [this.sealedEvent(streamId, key, metadata)], {
        expectedRevision: NO_STREAM,
      });
      return key;
    } catch (err) {
      // Made by someone else meanwhile: theirs is the key.
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      const theirs = await this.open(streamId);
      if (!theirs) throw err;
      return theirs;
    }
  }

  /** The key, or null when the stream has none (never made, or destroyed). */
  async open(streamId: string): Promise<Buffer | null> {
    const [last] = await this.store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
    return last ? this.unseal(last) : null;
  }

  /** Hard-deletes the key stream: what the key encrypted is unreadable from now on, everywhere. */
  async destroy(streamId: string): Promise<void> {
    await this.store.tombstoneStream(streamId);
  }

  /**
   * Re-seals the key under the current SECRETS_KEY, then truncates every older version. In that
   * order, and safe to run again: a crash between the two leaves the new version readable and
   * the old one to the next run, which finds the newest current and only truncates.
   */
  async reseal(streamId: string): Promise<ResealOutcome> {
    const versions = await this.store.readStream(streamId);
    const last = versions[versions.length - 1];
    if (!last) return 'destroyed';
    const { key_sealed } = last.data as DataKeySealedData;
    if (this.box.isCurrent(key_sealed)) {
      if (versions.length > 1) await this.store.truncateStream(streamId, last.revision);
      return 'current';
    }
    const key = this.unseal(last);
    const appended = await this.store.appendToStream(streamId, [this.sealedEvent(streamId, key, last.metadata)], {
      expectedRevision: last.revision,
    });
    await this.store.truncateStream(streamId, appended.nextExpectedRevision);
    return 'resealed';
  }

  /**
   * Every key stream whose name starts with one of `prefixes` that `$all` still names (on
   * EventStoreDB, destroyed ones too until a scavenge: `reseal` reports them as `destroyed`).
   */
  async list(prefixes: readonly string[]): Promise<string[]> {
    const found = new Set<string>();
    await scanAll(this.store, { streamNamePrefixes: prefixes }, (event) => found.add(event.streamId));
    return [...found];
  }

  private sealedEvent(streamId: string, key: Buffer, metadata: JsonObject) {
    const data: DataKeySealedData = { key_sealed: this.box.seal(key.toString('base64'), streamId) };
    return { id: randomUUID(), type: DATA_KEY_SEALED, data, metadata };
  }

  private unseal(event: RecordedEvent): Buffer {
    const { key_sealed } = event.data as DataKeySealedData;
    return Buffer.from(this.box.open(key_sealed, event.streamId), 'base64');
  }
}

/** Calls `visit` with every event of `$all` the filter lets through, oldest first, up to the head. */
export async function scanAll(
  store: EventStore,
  filter: SubscriptionFilter,
  visit: (event: RecordedEvent) => void,
): Promise<void> {
  const sub = store.subscribeToAll({ from: 'start', filter });
  try {
    for await (const message of sub) {
      if (message.kind === 'caught-up') break;
      if (message.kind === 'event') visit(message.event);
    }
  } finally {
    await sub.stop();
  }
}
