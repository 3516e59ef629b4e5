import type { Clock } from './clock';
import {
  ApiTransport,
  type ActionOptions,
  type CreateOptions,
  type Query,
  type RequestOptions,
  type WriteOptions,
} from './http';
import { paginate } from './pagination';
import { TokenManager } from './token-manager';
import type { FetchLike } from './transport';
import type {
  CancelOrder,
  CreateDocument,
  CreateEntity,
  CreateJurisdiction,
  CreateOrder,
  CreateTask,
  CreateWebhookEndpoint,
  Document,
  DocumentContent,
  DocumentEventType,
  DocumentFilters,
  Entity,
  EntityEventType,
  EntityFilters,
  HistoryEvent,
  Jurisdiction,
  JurisdictionEventType,
  JurisdictionFilters,
  Order,
  OrderEventType,
  OrderFilters,
  Page,
  PageParams,
  RecoverDeliveries,
  RecoveredDeliveries,
  ReplayNotifications,
  ReplayedNotifications,
  Task,
  TaskEventType,
  TaskFilters,
  UpdateDocument,
  UpdateEntity,
  UpdateJurisdiction,
  UpdateTask,
  UpdateWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookDeliveryFilters,
  WebhookEndpoint,
  WebhookEndpointSecret,
  WebhookEndpointStats,
  WebhookEndpointWithSecret,
  WebhookEventTypeInfo,
  WebhookSettings,
} from './types';
import type { EventFilters, EventListItem, EventTimeline } from './webhooks/events';

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

const seg = (id: string): string => {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('An id must be a non-empty string');
  return encodeURIComponent(id);
};

/** What every family has: create, get, list (+ all pages), history. */
class Family<T, Create, Filters extends PageParams, EventType extends string> {
  constructor(
    protected readonly http: ApiTransport,
    protected readonly path: string,
  ) {}

  /** `POST /{family}` → 201. With `idempotencyKey`, a retry replays the first answer. */
  create(body: Create, options?: CreateOptions): Promise<T> {
    return this.http.json<T>({ method: 'POST', path: this.path, body, options });
  }

  /** `GET /{family}/{id}`; 404 (ApiError) when missing or another account's. */
  get(id: string, options?: RequestOptions): Promise<T> {
    return this.http.json<T>({ method: 'GET', path: `${this.path}/${seg(id)}`, options });
  }

  /** One page, oldest first: pass `next_cursor` back as `cursor`. */
  list(filters?: Filters, options?: RequestOptions): Promise<Page<T>> {
    return this.http.json<Page<T>>({ method: 'GET', path: this.path, query: filters as Query | undefined, options });
  }

  /** Every item matching the filters, fetching pages of `limit` (default 50) as you iterate. */
  listAll(filters?: Omit<Filters, 'cursor'>, options?: RequestOptions): AsyncGenerator<T, void, undefined> {
    return paginate((cursor) => this.list({ ...filters, cursor } as Filters, options));
  }

  /** `GET /{family}/{id}/history`: the resource's own events, oldest first. */
  history(id: string, page?: PageParams, options?: RequestOptions): Promise<Page<HistoryEvent<EventType>>> {
    return this.http.json({
      method: 'GET',
      path: `${this.path}/${seg(id)}/history`,
      query: page as Query | undefined,
      options,
    });
  }

  historyAll(
    id: string,
    page?: Omit<PageParams, 'cursor'>,
    options?: RequestOptions,
  ): AsyncGenerator<HistoryEvent<EventType>, void, undefined> {
    return paginate((cursor) => this.history(id, { ...page, cursor }, options));
  }
}

class UpdatableFamily<T, Create, Update, Filters extends PageParams, EventType extends string> extends Family<
  T,
  Create,
  Filters,
  EventType
> {
  /** `PATCH /{family}/{id}` with only the fields to change; `ifMatch` → 412 if it changed since. */
  update(id: string, patch: Update, options?: WriteOptions): Promise<T> {
    return this.http.json<T>({ method: 'PATCH', path: `${this.path}/${seg(id)}`, body: patch, options });
  }
}

export class EntitiesApi extends UpdatableFamily<Entity, CreateEntity, UpdateEntity, EntityFilters, EntityEventType> {}

export class JurisdictionsApi extends UpdatableFamily<
  Jurisdiction,
  CreateJurisdiction,
  UpdateJurisdiction,
  JurisdictionFilters,
  JurisdictionEventType
> {}

export class TasksApi extends UpdatableFamily<Task, CreateTask, UpdateTask, TaskFilters, TaskEventType> {}

export class DocumentsApi extends UpdatableFamily<
  Document,
  CreateDocument,
  UpdateDocument,
  DocumentFilters,
  DocumentEventType
> {
  /** `DELETE /documents/{id}` → 204; afterwards the document (and its content) is 404. */
  async delete(id: string, options?: WriteOptions): Promise<void> {
    await this.http.raw({ method: 'DELETE', path: `${this.path}/${seg(id)}`, options });
  }

  /** `GET /documents/{id}/content`: the bytes and their content type. */
  async content(id: string, options?: RequestOptions): Promise<DocumentContent> {
    const response = await this.http.raw({ method: 'GET', path: `${this.path}/${seg(id)}/content`, options });
    return { content_type: response.headers.get('content-type') ?? 'application/octet-stream', data: response.body };
  }
}

export class OrdersApi extends Family<Order, CreateOrder, OrderFilters, OrderEventType> {
  /** `POST /orders/{id}/cancel` (submitted → cancelled); 409 from any other status. */
  cancel(id: string, body: CancelOrder = {}, options?: ActionOptions): Promise<Order> {
    return this.http.json<Order>({ method: 'POST', path: `${this.path}/${seg(id)}/cancel`, body, options });
  }
}

export class WebhookEndpointsApi {
  constructor(private readonly http: ApiTransport) {}

  /** Created disabled; the answer carries the signing `secret` (store it, or read it again with `secret()`). */
  create(body: CreateWebhookEndpoint, options?: CreateOptions): Promise<WebhookEndpointWithSecret> {
    return this.http.json({ method: 'POST', path: '/webhook-endpoints', body, options });
  }

  get(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.http.json({ method: 'GET', path: `/webhook-endpoints/${seg(id)}`, options });
  }

  list(page?: PageParams, options?: RequestOptions): Promise<Page<WebhookEndpoint>> {
    return this.http.json({ method: 'GET', path: '/webhook-endpoints', query: page as Query | undefined, options });
  }

  listAll(
    page?: Omit<PageParams, 'cursor'>,
    options?: RequestOptions,
  ): AsyncGenerator<WebhookEndpoint, void, undefined> {
    return paginate((cursor) => this.list({ ...page, cursor }, options));
  }

  update(id: string, patch: UpdateWebhookEndpoint, options?: WriteOptions): Promise<WebhookEndpoint> {
    return this.http.json({ method: 'PATCH', path: `/webhook-endpoints/${seg(id)}`, body: patch, options });
  }

  /** Deletes the endpoint; its pending retries end as `cancelled`. */
  async delete(id: string, options?: WriteOptions): Promise<void> {
    await this.http.raw({ method: 'DELETE', path: `/webhook-endpoints/${seg(id)}`, options });
  }

  enable(id: string, options?: ActionOptions): Promise<WebhookEndpoint> {
    return this.http.json({ method: 'POST', path: `/webhook-endpoints/${seg(id)}/enable`, options });
  }

  /** Stops deliveries; pending retries end as `cancelled`. */
  disable(id: string, options?: ActionOptions): Promise<WebhookEndpoint> {
    return this.http.json({ method: 'POST', path: `/webhook-endpoints/${seg(id)}/disable`, options });
  }

  /** A new secret; deliveries carry both signatures while the old one is still valid. */
  rotateSecret(id: string, options?: ActionOptions): Promise<WebhookEndpointWithSecret> {
    return this.http.json({ method: 'POST', path: `/webhook-endpoints/${seg(id)}/rotate-secret`, options });
  }

  /** The current signing secret. */
  secret(id: string, options?: RequestOptions): Promise<WebhookEndpointSecret> {
    return this.http.json({ method: 'GET', path: `/webhook-endpoints/${seg(id)}/secret`, options });
  }

  /** `GET /webhook-endpoints/{id}/deliveries?status=`. */
  deliveries(id: string, filters?: WebhookDeliveryFilters, options?: RequestOptions): Promise<Page<WebhookDelivery>> {
    return this.http.json({
      method: 'GET',
      path: `/webhook-endpoints/${seg(id)}/deliveries`,
      query: filters as Query | undefined,
      options,
    });
  }

  deliveriesAll(
    id: string,
    filters?: Omit<WebhookDeliveryFilters, 'cursor'>,
    options?: RequestOptions,
  ): AsyncGenerator<WebhookDelivery, void, undefined> {
    return paginate((cursor) => this.deliveries(id, { ...filters, cursor }, options));
  }

  /** `POST /webhook-endpoints/{id}/recover` (202): sends again every `failed` delivery whose event happened at or after `since`. */
  recover(id: string, body: RecoverDeliveries, options?: ActionOptions): Promise<RecoveredDeliveries> {
    return this.http.json({ method: 'POST', path: `/webhook-endpoints/${seg(id)}/recover`, body, options });
  }

  /**
   * `POST /webhook-endpoints/{id}/replay` (202): every notification of the account in
   * [since, until) matching the endpoint's event types is delivered to it again, with its original
   * `event_id` (your dedupe sees it as already processed), after the endpoint's live deliveries. At
   * most 100,000 per call (a wider window is a 400). Send an `idempotencyKey` to retry safely.
   */
  replay(id: string, body: ReplayNotifications, options?: ActionOptions): Promise<ReplayedNotifications> {
    return this.http.json({ method: 'POST', path: `/webhook-endpoints/${seg(id)}/replay`, body, options });
  }

  /** `GET /webhook-endpoints/{id}/stats`: the last 24 h of deliveries, response times, last success, failing since. */
  stats(id: string, options?: RequestOptions): Promise<WebhookEndpointStats> {
    return this.http.json({ method: 'GET', path: `/webhook-endpoints/${seg(id)}/stats`, options });
  }
}

/**
 * `GET /events`: every notification of the account, oldest first in stream order, each the
 * webhook payload plus `occurred_at`, kept for ever. Catch up after downtime by iterating from
 * the last event you processed: `for await (const e of filing.events.listAll({ after_event_id }))`.
 */
export class EventsApi {
  constructor(private readonly http: ApiTransport) {}

  /** One page; `event_type` may name several types (`webhook_endpoint.disabled` is listed only when named). */
  list(filters?: EventFilters, options?: RequestOptions): Promise<Page<EventListItem>> {
    const { event_type, ...rest } = filters ?? {};
    const types = typeof event_type === 'string' ? event_type : event_type?.join(',');
    return this.http.json({ method: 'GET', path: '/events', query: { ...rest, event_type: types }, options });
  }

  /** `GET /events/{id}`: the notification and where it went: each endpoint's delivery with every attempt. */
  get(id: string, options?: RequestOptions): Promise<EventTimeline> {
    return this.http.json({ method: 'GET', path: `/events/${seg(id)}`, options });
  }

  /** Every event matching the filters, fetching pages of `limit` (default 50) as you iterate. */
  listAll(
    filters?: Omit<EventFilters, 'cursor'>,
    options?: RequestOptions,
  ): AsyncGenerator<EventListItem, void, undefined> {
    return paginate((cursor) => this.list({ ...filters, cursor }, options));
  }
}

export class WebhookDeliveriesApi {
  constructor(private readonly http: ApiTransport) {}

  /** One delivery with every attempt. */
  get(id: string, options?: RequestOptions): Promise<WebhookDeliveryDetail> {
    return this.http.json({ method: 'GET', path: `/webhook-deliveries/${seg(id)}`, options });
  }

  /** `POST /webhook-deliveries/{id}/redeliver` (202): sends a `failed` or `cancelled` delivery again; answers the delivery. */
  redeliver(id: string, options?: CreateOptions): Promise<WebhookDeliveryDetail> {
    return this.http.json({ method: 'POST', path: `/webhook-deliveries/${seg(id)}/redeliver`, options });
  }
}

export class WebhookSettingsApi {
  constructor(private readonly http: ApiTransport) {}

  get(options?: RequestOptions): Promise<WebhookSettings> {
    return this.http.json({ method: 'GET', path: '/webhook-settings', options });
  }

  /** The account switch *Webhook Notifications*. */
  update(settings: WebhookSettings, options?: RequestOptions): Promise<WebhookSettings> {
    return this.http.json({ method: 'PUT', path: '/webhook-settings', body: settings, options });
  }
}

export class WebhookEventTypesApi {
  constructor(private readonly http: ApiTransport) {}

  /** The catalog of the notification types, the operational one last (the `data` of `GET /webhook-event-types`). */
  async list(options?: RequestOptions): Promise<WebhookEventTypeInfo[]> {
    const body = await this.http.json<{ data: WebhookEventTypeInfo[] }>({
      method: 'GET',
      path: '/webhook-event-types',
      options,
    });
    return body.data;
  }
}

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
