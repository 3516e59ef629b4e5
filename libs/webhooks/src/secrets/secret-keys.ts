import {
  EVENT_STORE,
  type EventStore,
  type ExpectedRevision,
  NO_STREAM,
  type Position,
  type RecordedEvent,
} from '@filing/event-store';
import {
  buildMetadata,
  type CommandContext,
  handleCommand,
  loadAggregate,
  NotFoundError,
  type ResealOutcome,
  scanAll,
  SecretBox,
  streamName,
} from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  decideEndpoint,
  type EndpointCommand,
  evolveEndpoint,
  initialEndpoint,
  type EndpointState,
} from '../endpoints/endpoint';
import {
  ENDPOINT_SECRET_STORED,
  ENDPOINT_STREAM,
  type EndpointEvent,
  type EndpointSecretStored,
  secretContext,
} from '../endpoints/endpoint.events';

/** `webhookendpointkey-<endpoint id>`: the endpoint's signing secrets, sealed under SECRETS_KEY. */
export const SECRET_KEY_STREAM = 'webhookendpointkey';
const SYSTEM_ACTOR = 'system:webhooks';

export function secretKeyStreamId(endpointId: string): string {
  return streamName(SECRET_KEY_STREAM, endpointId);
}

/**
 * The endpoints' signing secrets, sealed (SecretBox, bound to the endpoint), in a key stream per
 * endpoint rather than in its own events, so that they can be erased (the key stream is
 * tombstoned when the endpoint is deleted or its account erased) and a retired SECRETS_KEY
 * retired for real (`reseal` re-seals the live secrets, then truncates the older versions). Each
 * event is `webhooks.EndpointSecretStored {endpoint_id, secret_fingerprint, secret_sealed}`; the
 * endpoints read model takes the sealed secret from it. Endpoints created before this version
 * also have their secrets in their EndpointCreated / EndpointSecretRotated / EndpointSecretSealed
 * events, which stay (docs/operations.md, "Backups and erasure").
 */
@Injectable()
export class SecretKeys {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly box: SecretBox,
  ) {}

  /** Seals `secret` for the endpoint into its key stream; the position the read model must reach. */
  async seal(accountId: string, endpointId: string, fingerprint: string, secret: string): Promise<Position> {
    return this.append(accountId, endpointId, [[fingerprint, this.box.seal(secret, secretContext(endpointId))]], 'any');
  }

  /**
   * A secret an older version kept in `webhook-secrets.db`, sealed into the key stream unless it
   * is there already, or no longer the endpoint's; whether it wrote. NotFoundError for an
   * endpoint that was never created.
   */
  async importSecret(endpointId: string, fingerprint: string, secret: string): Promise<boolean> {
    const { state } = await this.endpoint(endpointId);
    if (!state.exists) throw NotFoundError.of('webhook endpoint', endpointId);
    const live = fingerprint === state.secretFingerprint || fingerprint === state.previousFingerprint;
    const versions = await this.store.readStream(secretKeyStreamId(endpointId));
    if (state.deleted || !live || versions.some((e) => e.data.secret_fingerprint === fingerprint)) return false;
    await this.seal(state.accountId ?? '', endpointId, fingerprint, secret);
    return true;
  }

  /** Tombstones the key stream: no copy of the endpoint's secrets opens any more. */
  async destroy(endpointId: string): Promise<void> {
    await this.store.tombstoneStream(secretKeyStreamId(endpointId));
  }

  /**
   * The endpoint's live secrets (current, and previous while a rotation's overlap may last) sealed
   * anew under the current SECRETS_KEY, then the older versions truncated; a deleted endpoint's
   * key stream destroyed. In that order and safe to repeat: a crash between the two writes leaves
   * the new versions readable, and the next run truncates.
   */
  async reseal(endpointId: string): Promise<ResealOutcome> {
    const { state } = await this.endpoint(endpointId);
    if (!state.exists || state.deleted) {
      await this.destroy(endpointId);
      return 'destroyed';
    }
    const versions = await this.store.readStream(secretKeyStreamId(endpointId));
    const live = liveSealed(state, versions);
    if (live.length === 0) return 'destroyed';
    const last = versions[versions.length - 1];
    if (live.every(([, sealed]) => this.box.isCurrent(sealed)) && live.length === versions.length) return 'current';
    if (last && live.every(([, sealed]) => this.box.isCurrent(sealed)) && versions.length > live.length) {
      await this.store.truncateStream(secretKeyStreamId(endpointId), last.revision - BigInt(live.length) + 1n);
      return 'current';
    }
    const context = secretContext(endpointId);
    const resealed = live.map(([fp, sealed]): [string, string] => [
      fp,
      this.box.seal(this.box.open(sealed, context), context),
    ]);
    await this.append(state.accountId ?? '', endpointId, resealed, last ? last.revision : NO_STREAM);
    if (last) await this.store.truncateStream(secretKeyStreamId(endpointId), last.revision + 1n);
    return 'resealed';
  }

  /**
   * Every endpoint ever created (from the log), re-sealed or destroyed; progress after each.
   * `stopped` ends it early (a shutdown).
   */
  async resealAll(
    progress: (done: number, total: number) => void = () => {},
    stopped: () => boolean = () => false,
  ): Promise<Record<ResealOutcome, number>> {
    const report: Record<ResealOutcome, number> = { resealed: 0, current: 0, destroyed: 0 };
    const ids = await this.endpointIds(() => true);
    for (const [i, id] of ids.entries()) {
      if (stopped()) break;
      report[await this.reseal(id)]++;
      progress(i + 1, ids.length);
    }
    return report;
  }

  /** The ids of the endpoints `accountId` ever created, oldest first. */
  async endpointsOf(accountId: string): Promise<string[]> {
    return this.endpointIds((e) => e.metadata.account_id === accountId);
  }

  /**
   * Deletes every endpoint of the account that is not deleted yet (EndpointDeleted, as by its
   * users) and destroys the key stream of every endpoint it ever had; their ids.
   */
  async eraseAccount(context: CommandContext, accountId: string): Promise<string[]> {
    const ids = await this.endpointsOf(accountId);
    for (const endpointId of ids) {
      await handleCommand<EndpointState, EndpointEvent, EndpointCommand>({
        store: this.store,
        streamId: streamName(ENDPOINT_STREAM, endpointId),
        initialState: initialEndpoint,
        evolve: evolveEndpoint,
        decide: (state, command) => (state.deleted ? [] : decideEndpoint(state, command)),
        command: { kind: 'delete', accountId, endpointId },
        context,
      });
      await this.destroy(endpointId);
    }
    return ids;
  }

  private endpoint(endpointId: string) {
    return loadAggregate(this.store, streamName(ENDPOINT_STREAM, endpointId), initialEndpoint, evolveEndpoint);
  }

  private async endpointIds(keep: (e: RecordedEvent) => boolean): Promise<string[]> {
    const ids: string[] = [];
    await scanAll(this.store, { eventTypePrefixes: ['webhooks.EndpointCreated'] }, (e) => {
      if (keep(e)) ids.push(e.data.endpoint_id as string);
    });
    return ids;
  }

  private async append(
    accountId: string,
    endpointId: string,
    sealed: ReadonlyArray<[fingerprint: string, sealed: string]>,
    expectedRevision: ExpectedRevision,
  ): Promise<Position> {
    const metadata = buildMetadata({
      account_id: accountId,
      actor: SYSTEM_ACTOR,
      correlation_id: randomUUID(),
      causation_id: null,
    });
    const events = sealed.map(([secret_fingerprint, secret_sealed]) => {
      const event: EndpointSecretStored = {
        type: ENDPOINT_SECRET_STORED,
        data: { endpoint_id: endpointId, secret_fingerprint, secret_sealed },
      };
      return { id: randomUUID(), type: event.type, data: event.data, metadata: { ...metadata } };
    });
    return (await this.store.appendToStream(secretKeyStreamId(endpointId), events, { expectedRevision })).position;
  }
}

/**
 * The sealed form of each live secret (current, then previous): the newest in the key stream, else
 * the one the endpoint's own events carry (an endpoint made before key streams).
 */
function liveSealed(state: EndpointState, versions: readonly RecordedEvent[]): Array<[string, string]> {
  const newest = new Map<string, string>();
  for (const e of versions) newest.set(e.data.secret_fingerprint as string, e.data.secret_sealed as string);
  const fingerprints = [state.secretFingerprint, state.previousFingerprint].filter((fp): fp is string => !!fp);
  return fingerprints.flatMap((fp) => {
    const sealed = newest.get(fp) ?? state.sealedSecrets[fp];
    return sealed ? [[fp, sealed] as [string, string]] : [];
  });
}
