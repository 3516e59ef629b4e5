import type { Clock } from './clock';
import { DocumentsApi, EntitiesApi, JurisdictionsApi, OrdersApi, TasksApi } from './families';
import { ApiTransport } from './http';
import { EventsApi, WebhookDeliveriesApi, WebhookEventTypesApi, WebhookSettingsApi } from './notifications';
import { TokenManager } from './token-manager';
import type { FetchLike } from './transport';
import { WebhookEndpointsApi } from './webhook-endpoints';

/** The API client's credentials (client credentials grant). */
export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Narrow the token's scope, e.g. `"read"`. Default: all the client may have. */
  readonly scope?: string;
  /** Where `/o/token/` lives; default: `baseUrl`. */
  readonly authUrl?: string;
  readonly tokenManager?: undefined;
}

/** Share one token cache between several clients with the same credentials. */
export interface SharedTokens {
  readonly tokenManager: TokenManager;
}

export type FilingClientOptions = FilingClientSettings & (ClientCredentials | SharedTokens);

export interface FilingClientSettings {
  /** The service's origin, e.g. `https://api.example.com`. */
  readonly baseUrl: string;
  /** Default 30 000 ms per request. */
  readonly timeoutMs?: number;
  /** Refresh tokens this many seconds before they expire (default 60). */
  readonly refreshMarginSeconds?: number;
  readonly fetch?: FetchLike;
  /** Time source of the token cache (tests). */
  readonly clock?: Clock;
  readonly userAgent?: string;
}

export const API_PATH = '/external-api/v1';
const DEFAULT_USER_AGENT = 'filing-client-node/0.1.0';

/**
 * The Filing Service API for one API client (OAuth client credentials):
 *
 * ```ts
 * const filing = new FilingClient({ baseUrl, clientId, clientSecret });
 * const entity = await filing.entities.create({ name: 'Acme LLC', entity_type: 'llc' });
 * for await (const order of filing.orders.listAll({ entity_id: entity.id })) console.log(order.status);
 * ```
 *
 * Tokens are fetched, cached and refreshed by `tokens` (see TokenManager). Errors are
 * `ApiError` (problem+json), `OAuthError` (token endpoint) or `NetworkError`.
 */
export class FilingClient {
  readonly tokens: TokenManager;
  readonly entities: EntitiesApi;
  readonly jurisdictions: JurisdictionsApi;
  readonly documents: DocumentsApi;
  readonly tasks: TasksApi;
  readonly orders: OrdersApi;
  readonly webhookEndpoints: WebhookEndpointsApi;
  readonly webhookDeliveries: WebhookDeliveriesApi;
  readonly webhookSettings: WebhookSettingsApi;
  readonly webhookEventTypes: WebhookEventTypesApi;
  readonly events: EventsApi;
  /** Low-level access for routes the SDK does not wrap yet: `filing.http.json({method, path})`. */
  readonly http: ApiTransport;

  constructor(options: FilingClientOptions) {
    const base = trimSlash(new URL(options.baseUrl).toString());
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    const timeoutMs = options.timeoutMs ?? 30_000;
    this.tokens = options.tokenManager
      ? options.tokenManager
      : new TokenManager({
          tokenUrl: `${trimSlash(new URL(options.authUrl ?? base).toString())}/o/token/`,
          clientId: options.clientId,
          clientSecret: options.clientSecret,
          scope: options.scope,
          refreshMarginSeconds: options.refreshMarginSeconds,
          fetch: fetchImpl,
          clock: options.clock,
          timeoutMs,
          userAgent,
        });
    this.http = new ApiTransport(base + API_PATH, this.tokens, fetchImpl, timeoutMs, userAgent);
    this.entities = new EntitiesApi(this.http, '/entities');
    this.jurisdictions = new JurisdictionsApi(this.http, '/jurisdictions');
    this.documents = new DocumentsApi(this.http, '/documents');
    this.tasks = new TasksApi(this.http, '/tasks');
    this.orders = new OrdersApi(this.http, '/orders');
    this.webhookEndpoints = new WebhookEndpointsApi(this.http);
    this.webhookDeliveries = new WebhookDeliveriesApi(this.http);
    this.webhookSettings = new WebhookSettingsApi(this.http);
    this.webhookEventTypes = new WebhookEventTypesApi(this.http);
    this.events = new EventsApi(this.http);
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
