import type { ApiTransport, ActionOptions, CreateOptions, Query, RequestOptions, WriteOptions } from './http';
import { paginate } from './pagination';
import type {
  CancelOrder,
  CreateDocument,
  CreateEntity,
  CreateJurisdiction,
  CreateOrder,
  CreateTask,
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
  Task,
  TaskEventType,
  TaskFilters,
  UpdateDocument,
  UpdateEntity,
  UpdateJurisdiction,
  UpdateTask,
} from './types';

/** An id as one path segment: refused empty, escaped so that it cannot reach another route. */
export const seg = (id: string): string => {
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
