import type { ApiTransport, CreateOptions, RequestOptions } from './http';
import { seg } from './families';
import { paginate } from './pagination';
import type { Page } from './types';
import type { WebhookDeliveryDetail, WebhookEventTypeInfo, WebhookSettings } from './webhook-types';
import type { EventFilters, EventListItem, EventTimeline } from './webhooks/events';

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
