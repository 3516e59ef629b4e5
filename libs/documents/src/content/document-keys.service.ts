import { EVENT_STORE, type EventStore, StreamDeletedError } from '@filing/event-store';
import {
  buildMetadata,
  type CommandContext,
  KeyStreams,
  type ResealOutcome,
  scanAll,
  SecretBox,
  streamName,
  toEventData,
} from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { DocumentAggregate } from '../document.aggregate';
import {
  ACCOUNT_ERASED,
  type AccountErased,
  DOCUMENT_CONTENT_STREAM_CONTEXT,
  DOCUMENT_KEY_STREAM_CONTEXT,
  ERASURE_STREAM_CONTEXT,
} from '../document.events';
import { joinContent } from './content-chunks';
import { DocumentContentStore, legacyContentStreamId } from './document-content.store';

/** Told after each key stream or document is done: how many of how many. */
export type Progress = (done: number, total: number) => void;

export type ResealReport = Record<ResealOutcome, number>;
export interface EncryptReport {
  /** Live documents whose plaintext stream was encrypted, then removed. */
  readonly encrypted: number;
  /** Deleted (or never added) documents whose plaintext stream was removed. */
  readonly erased: number;
}

const KEY_PREFIX = `${DOCUMENT_KEY_STREAM_CONTEXT}-`;
const LEGACY_PREFIX = `${DOCUMENT_CONTENT_STREAM_CONTEXT}-`;

/**
 * The operator's chores on documents' keys and content (apps/cli): re-sealing every data key
 * under the current SECRETS_KEY (`secrets:reseal`), and encrypting the plaintext content streams
 * of versions before content encryption (`documents:encrypt`). Both go through the log for the
 * streams to visit, skip what is done already and can be run again after an interruption.
 */
@Injectable()
export class DocumentKeys {
  private readonly keys: KeyStreams;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    box: SecretBox,
    private readonly contents: DocumentContentStore,
  ) {
    this.keys = new KeyStreams(store, box);
  }

  /**
   * Every document key re-sealed under the current SECRETS_KEY and its older versions truncated.
   * The key of a deleted document whose delete was interrupted before it could destroy the key is
   * destroyed instead (counted as `destroyed`).
   */
  async resealAll(progress: Progress = () => {}): Promise<ResealReport> {
    const report: ResealReport = { resealed: 0, current: 0, destroyed: 0 };
    const streams = await this.keys.list([KEY_PREFIX]);
    for (const [i, streamId] of streams.entries()) {
      const documentId = streamId.slice(KEY_PREFIX.length);
      if (await this.deleted(documentId)) {
        await this.contents.destroy(documentId);
        report.destroyed++;
      } else {
        report[await this.keys.reseal(streamId)]++;
      }
      progress(i + 1, streams.length);
    }
    return report;
  }

  /**
   * Every plaintext content stream an earlier version wrote: a live document's is encrypted
   * under a new key of its own, read back and checked, and only then tombstoned; a deleted
   * document's is tombstoned at once (sqlite: its rows removed; EventStoreDB: at its next
   * scavenge). A run cut short is finished by the next: the encrypted write is idempotent.
   */
  async encryptLegacy(progress: Progress = () => {}): Promise<EncryptReport> {
    const ids = new Set<string>();
    await scanAll(this.store, { streamNamePrefixes: [LEGACY_PREFIX] }, (e) =>
      ids.add(e.streamId.slice(LEGACY_PREFIX.length)),
    );
    let encrypted = 0;
    let erased = 0;
    for (const [i, documentId] of [...ids].entries()) {
      if (await this.encryptOne(documentId)) encrypted++;
      else erased++;
      progress(i + 1, ids.size);
    }
    return { encrypted, erased };
  }

  /** True when the document is live and its content now encrypted; false when it was erased. */
  private async encryptOne(documentId: string): Promise<boolean> {
    const { state } = await DocumentAggregate.load(this.store, documentId);
    if (!state || state.deleted) {
      await this.contents.destroy(documentId);
      return false;
    }
    const legacy = await this.store.readStream(legacyContentStreamId(documentId));
    if (legacy.length > 0) {
      const bytes = joinContent(
        legacy.map((e) => e.data),
        state,
      );
      const context: CommandContext = {
        account_id: state.account_id,
        actor: 'system:documents-encrypt',
        correlation_id: documentId,
        causation_id: null,
      };
      try {
        await this.contents.write(context, documentId, bytes);
      } catch (err) {
        // Deleted meanwhile: its delete destroyed the key (and so the plaintext stream too).
        if (err instanceof StreamDeletedError) return false;
        throw err;
      }
      const back = await this.contents.read(documentId, state);
      if (!back?.equals(bytes)) throw new Error(`Document ${documentId}: the encrypted content does not read back`);
    }
    await this.store.tombstoneStream(legacyContentStreamId(documentId));
    return true;
  }

  /**
   * Destroys the key of every document the account ever added (deleting the live ones first,
   * through `deleteLive`, so the API answers 404 for them as for any deleted document). Returns
   * the ids of the documents whose keys are gone.
   */
  async eraseAccount(accountId: string, deleteLive: (documentId: string) => Promise<void>): Promise<string[]> {
    const ids: string[] = [];
    await scanAll(this.store, { eventTypePrefixes: ['documents.DocumentAdded'] }, (e) => {
      if (e.metadata.account_id === accountId) ids.push(e.streamId.slice(DocumentAggregate.streamPrefix.length + 1));
    });
    for (const documentId of ids) {
      if (!(await this.deleted(documentId))) await deleteLive(documentId);
      // Again, whatever the delete managed: destroying is idempotent.
      await this.contents.destroy(documentId);
    }
    return ids;
  }

  /** The erasure, for audit: ids and counts only (`erasure-<account id>`). */
  async recordErasure(
    context: CommandContext,
    accountId: string,
    documentIds: readonly string[],
    webhookEndpointIds: readonly string[],
  ): Promise<void> {
    const event: AccountErased = {
      type: ACCOUNT_ERASED,
      data: { account_id: accountId, document_ids: [...documentIds], webhook_endpoint_ids: [...webhookEndpointIds] },
    };
    await this.store.appendToStream(streamName(ERASURE_STREAM_CONTEXT, accountId), [
      toEventData(event, buildMetadata(context)),
    ]);
  }

  private async deleted(documentId: string): Promise<boolean> {
    const { state } = await DocumentAggregate.load(this.store, documentId);
    return state?.deleted ?? false;
  }
}
