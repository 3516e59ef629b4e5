/**
 * @filing/client — the Filing Service SDK for Node ≥ 20: OAuth token management, a typed API
 * client, and Standard Webhooks verification with deduplication. No dependencies. The SQLite
 * dedupe store is a separate entry point (`@filing/client/dedupe-sqlite`).
 */
export {
  FilingClient,
  API_PATH,
  type FilingClientOptions,
  type FilingClientSettings,
  type ClientCredentials,
  type SharedTokens,
} from './client';
export { EntitiesApi, JurisdictionsApi, DocumentsApi, TasksApi, OrdersApi } from './families';
export { WebhookEndpointsApi } from './webhook-endpoints';
export { WebhookDeliveriesApi, WebhookSettingsApi, WebhookEventTypesApi, EventsApi } from './notifications';
export {
  TokenManager,
  formEncode,
  DEFAULT_REFRESH_MARGIN_SECONDS,
  type TokenManagerOptions,
  type AccessToken,
} from './token-manager';
export {
  ApiTransport,
  entityTag,
  type RequestOptions,
  type CreateOptions,
  type WriteOptions,
  type ActionOptions,
  type ApiRequest,
  type RawResponse,
  type Query,
} from './http';
export { FilingError, ApiError, OAuthError, NetworkError, type Problem, type FieldError } from './errors';
export { paginate, pages, collect } from './pagination';
export { type Clock, systemClock } from './clock';
export type { FetchLike } from './transport';
export * from './types';
export * from './webhook-types';
export * from './webhooks/events';
export {
  verify,
  verifyWebhook,
  sign,
  signedHeaders,
  secretKey,
  WebhookVerificationError,
  DEFAULT_TOLERANCE_SECONDS,
  type WebhookVerificationReason,
  type WebhookHeaders,
  type VerifyOptions,
  type VerifiedWebhook,
} from './webhooks/verify';
export {
  MemoryDedupeStore,
  Deduplicator,
  DEFAULT_DEDUPE_TTL_MS,
  DEFAULT_LEASE_MS,
  type DedupeStore,
  type ClaimResult,
  type DedupeOutcome,
  type DeduplicatorOptions,
  type MemoryDedupeStoreOptions,
  type Awaitable,
} from './webhooks/dedupe';
export { createWebhookHandler, type WebhookHandlerOptions, type WebhookHandlerResult } from './webhooks/handler';
export {
  latestOnly,
  resourceOf,
  MemoryVersionStore,
  type VersionStore,
  type LatestOnlyOptions,
} from './webhooks/latest-only';
