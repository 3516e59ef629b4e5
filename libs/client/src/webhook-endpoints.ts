import type { ApiTransport, ActionOptions, CreateOptions, Query, RequestOptions, WriteOptions } from './http';
import { seg } from './families';
import { paginate } from './pagination';
import type { Page, PageParams } from './types';
import type {
  CreateWebhookEndpoint,
  RecoverDeliveries,
  RecoveredDeliveries,
  ReplayNotifications,
  ReplayedNotifications,
  UpdateWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryFilters,
  WebhookEndpoint,
  WebhookEndpointSecret,
  WebhookEndpointStats,
  WebhookEndpointWithSecret,
} from './webhook-types';

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
