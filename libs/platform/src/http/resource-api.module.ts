import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { type DynamicModule, Global, Module } from '@nestjs/common';
import { SecretBox } from '../crypto/secret-box';
import { ServiceKeys } from '../crypto/service-keys';
import { IDEMPOTENCY_OPTIONS, IdempotencyHooks, IdempotencyGuard, type IdempotencyOptions } from './idempotency.guard';
import { IDEMPOTENCY_IN_FLIGHT_WAIT_MS, IdempotencyStore } from './idempotency.store';
import { JSON_API_PREFIXES, JsonBodyGuard } from './json-body.guard';
import { CursorCodec } from './cursor-codec';
import { ReferencesModule } from './references';
import { RouteEnhancers } from './route-enhancers';

export interface ResourceApiModuleOptions {
  /**
   * Default: both APIs, `/external-api/v1/` and `/internal-api/v1/` (CONTRACT.md §3: any POST). An
   * answer with a secret shown once (an operator's client create and rotation) is marked
   * `@SkipIdempotency()`: it must not be stored.
   */
  readonly idempotencyPathPrefixes?: readonly string[];
  readonly idempotencyTtlMs?: number;
  /** How long a request waits for a concurrent one with the same Idempotency-Key to answer (default 2 s), then 409. */
  readonly idempotencyInFlightWaitMs?: number;
  /** The root of the ServiceKeys from `SECRETS_KEY` (config `secretsKey`); when null or absent, `cursorKeyFile`. */
  readonly secretsKey?: ServiceKeys | null;
  /**
   * `DATA_DIR/cursor.key`: the root of the ServiceKeys when there is no SECRETS_KEY (sqlite only),
   * made on first start; it then also signs pagination cursors itself, as it always has.
   */
  readonly cursorKeyFile: string;
}

/**
 * The HTTP mechanisms every resource family shares and that need wiring: the JSON-only guard on
 * every route and the Idempotency-Key guard on every POST (with the key store, in the event
 * store), the CursorCodec that
 * signs and checks pagination cursors (pass it to `pageRequest`), the ServiceKeys and the
 * SecretBox they make, plus the cross-family reference checker (ReferencesModule). Needs the event
 * store and the projections module (both global).
 */
@Global()
@Module({})
export class ResourceApiModule {
  static forRoot(options: ResourceApiModuleOptions): DynamicModule {
    const idempotency: IdempotencyOptions = {
      pathPrefixes: options.idempotencyPathPrefixes ?? JSON_API_PREFIXES,
      inFlightWaitMs: options.idempotencyInFlightWaitMs ?? IDEMPOTENCY_IN_FLIGHT_WAIT_MS,
    };
    return {
      module: ResourceApiModule,
      global: true,
      imports: [ReferencesModule],
      providers: [
        { provide: IDEMPOTENCY_OPTIONS, useValue: idempotency },
        {
          provide: IdempotencyStore,
          useFactory: (store: EventStore) => new IdempotencyStore({ store, ttlMs: options.idempotencyTtlMs }),
          inject: [EVENT_STORE],
        },
        // Bound in this order: a non-JSON body is refused before a key is reserved.
        JsonBodyGuard,
        IdempotencyGuard,
        RouteEnhancers,
        IdempotencyHooks,
        {
          provide: ServiceKeys,
          useFactory: () => options.secretsKey ?? ServiceKeys.fromKeyFile(options.cursorKeyFile),
        },
        {
          provide: CursorCodec,
          useFactory: (keys: ServiceKeys) => CursorCodec.fromServiceKeys(keys),
          inject: [ServiceKeys],
        },
        { provide: SecretBox, useFactory: (keys: ServiceKeys) => keys.secretBox(), inject: [ServiceKeys] },
      ],
      exports: [ReferencesModule, IdempotencyStore, CursorCodec, ServiceKeys, SecretBox],
    };
  }
}
