import { SqliteEventStore } from '@filing/event-store';
import { buildMetadata, SecretBox, toEventData } from '@filing/platform';
import { randomBytes } from 'node:crypto';
import { EndpointEvents, secretContext } from '../endpoints/endpoint.events';
import { SecretKeys, secretKeyStreamId } from './secret-keys';

/** Signing secrets in key streams: re-sealed and truncated, destroyed with their endpoint. */
describe('webhook signing secrets in key streams', () => {
  const context = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r', causation_id: null };
  const [oldRoot, newRoot] = [randomBytes(32), randomBytes(32)];
  let store: SqliteEventStore;
  beforeEach(() => (store = new SqliteEventStore({ file: ':memory:' })));
  afterEach(async () => store.close());

  /** An endpoint as the events name it; `sealed` as versions before key streams put it in EndpointCreated. */
  async function endpoint(id: string, fingerprint: string, sealed?: string): Promise<void> {
    const data = {
      endpoint_id: id,
      url: 'https://example.test/hook',
      description: null,
      event_types: [],
      secret_generation: 1,
      secret_fingerprint: fingerprint,
      ...(sealed !== undefined && { secret_sealed: sealed }),
    };
    await store.appendToStream(`webhookendpoint-${id}`, [
      toEventData({ type: EndpointEvents.EndpointCreated, data }, buildMetadata(context)),
    ]);
  }
  const sealedIn = async (id: string) =>
    (await store.readAll()).filter((e) => e.streamId === secretKeyStreamId(id)).map((e) => e.data.secret_sealed);

  it('re-seals the live secret under the new key and removes the old version; then it is current', async () => {
    const before = new SecretKeys(store, new SecretBox(oldRoot));
    await endpoint('e1', 'fp1');
    await before.seal('acc-1', 'e1', 'fp1', 'whsec_one');
    const box = new SecretBox(newRoot, [oldRoot]);
    const after = new SecretKeys(store, box);
    expect(await after.resealAll()).toEqual({ resealed: 1, current: 0, destroyed: 0 });
    const sealed = (await sealedIn('e1')) as string[];
    expect(sealed).toHaveLength(1);
    expect(new SecretBox(newRoot).open(sealed[0], secretContext('e1'))).toBe('whsec_one');
    expect(await after.resealAll()).toEqual({ resealed: 0, current: 1, destroyed: 0 });
  });

  it('moves the secret of an endpoint made before key streams into its key stream', async () => {
    await endpoint('e2', 'fp2', new SecretBox(oldRoot).seal('whsec_two', secretContext('e2')));
    expect(await new SecretKeys(store, new SecretBox(newRoot, [oldRoot])).reseal('e2')).toBe('resealed');
    const [sealed] = (await sealedIn('e2')) as string[];
    expect(new SecretBox(newRoot).open(sealed, secretContext('e2'))).toBe('whsec_two');
  });

  it("destroys a deleted endpoint's key stream, and an erased account's endpoints with theirs", async () => {
    const keys = new SecretKeys(store, new SecretBox(oldRoot));
    for (const id of ['e3', 'e4']) {
      await endpoint(id, `fp-${id}`);
      await keys.seal('acc-1', id, `fp-${id}`, `whsec_${id}`);
    }
    await store.appendToStream('webhookendpoint-e3', [
      toEventData({ type: EndpointEvents.EndpointDeleted, data: { endpoint_id: 'e3' } }, buildMetadata(context)),
    ]);
    expect(await keys.reseal('e3')).toBe('destroyed');
    expect(await sealedIn('e3')).toEqual([]);

    expect(await keys.eraseAccount({ ...context, actor: 'operator:cli' }, 'acc-1')).toEqual(['e3', 'e4']);
    expect(await sealedIn('e4')).toEqual([]);
    expect((await store.readStream('webhookendpoint-e4')).map((e) => e.type)).toEqual([
      EndpointEvents.EndpointCreated,
      EndpointEvents.EndpointDeleted,
    ]);
  });
});
