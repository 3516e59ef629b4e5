import type {
  AppendOptions,
  AppendResult,
  EventData,
  EventStore,
  EventSubscription,
  HeadPositionOptions,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  StreamRevision,
  SubscribeToAllOptions,
} from './event-store.port';

export type AppendObserver = (streamId: string, events: readonly EventData[], result: AppendResult) => void;

/**
 * The configured store plus observers told of every acknowledged append (metrics), so adapters
 * stay free of instrumentation. An observer that throws is ignored: counting must never fail a write.
 */
export class ObservedEventStore implements EventStore {
  private readonly observers = new Set<AppendObserver>();

  constructor(private readonly inner: EventStore) {}

  get kind(): string {
    return this.inner.kind;
  }

  get sharedByInstances(): boolean {
    return this.inner.sharedByInstances;
  }

  onAppend(observer: AppendObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  async appendToStream(streamId: string, events: readonly EventData[], options?: AppendOptions): Promise<AppendResult> {
    const result = await this.inner.appendToStream(streamId, events, options);
    for (const observer of this.observers) {
      try {
        observer(streamId, events, result);
      } catch {
        // see class comment
      }
    }
    return result;
  }

  streamRevision(streamId: string): Promise<StreamRevision | null> {
    return this.inner.streamRevision(streamId);
  }
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }
  subscribeToAll(options?: SubscribeToAllOptions): EventSubscription {
    return this.inner.subscribeToAll(options);
  }
  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void> {
    return this.inner.setStreamMetadata(streamId, metadata);
  }
  getStreamMetadata(streamId: string): Promise<StreamMetadata> {
    return this.inner.getStreamMetadata(streamId);
  }
  deleteStream(streamId: string): Promise<void> {
    return this.inner.deleteStream(streamId);
  }
  tombstoneStream(streamId: string): Promise<void> {
    return this.inner.tombstoneStream(streamId);
  }
  truncateStream(streamId: string, before: StreamRevision): Promise<void> {
    return this.inner.truncateStream(streamId, before);
  }
  headPosition(options?: HeadPositionOptions): Promise<Position | null> {
    return this.inner.headPosition(options);
  }
  ping(): Promise<void> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
