// The TypeScript SDK of the Distributor ERP Integration API: openapi-fetch over the types generated from the
// API description, with the client behaviour the spec asks for (retries with one Idempotency-Key, errors as
// exceptions, pagination, change-feed polling, webhook verification and deduplication).
export type { components, paths } from './generated/api-types.js';
// A named type per schema (Invoice, Payment, CreditNote, DmsFlag, InvoiceCreate, ...), generated from the API
// description by scripts/generate-schema-types.mjs. The modules' own exports below win over a schema of the same
// name (Problem, FieldError and DmsFileBatch are those schemas too; Page is the SDK's Page<Item>).
export * from './schema-types.js';
export { createErpClient, DEFAULT_RETRY_POLICY, type ErpClientOptions } from './client.js';
export type { ErpClient, ErpMethod, ErpPaths, HttpMethod, PathsWithMethod, Settled } from './typed-paths.js';
export { ErpApiError, ErpConnectionError, type FieldError, type Problem } from './errors.js';
export type { Fetch, RetryPolicy } from './retry.js';
export {
  paginate,
  paginatePages,
  type ListPathParameters,
  type ListQuery,
  type Page,
  type PageItem,
  type PagePath,
  type PaginateArguments,
  type PaginateOptions,
} from './pagination.js';
export {
  createChangeFeedPoller,
  DEFAULT_OVERLAP_MS,
  MemoryCheckpointStore,
  type ChangeFeedOptions,
  type ChangeFeedPoller,
  type Checkpoint,
  type CheckpointStore,
  type FeedParameter,
  type FeedParameterName,
  type FeedPath,
  type HandledChange,
  type RecordIdField,
} from './change-feed.js';
export { uploadDmsFile, type DmsFileBatch, type UploadDmsFileOptions } from './dms-files.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookVerificationFailure,
} from './webhooks.js';
export {
  WEBHOOK_EVENT_TYPES,
  type DeletedRecord,
  type TruncatedRecord,
  type WebhookEnvelope,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookObjectOf,
  type WebhookRecord,
  type CreditNoteCancelledEvent,
  type CreditNoteCreatedEvent,
  type CreditNoteUpdatedEvent,
  type CustomerCreatedEvent,
  type CustomerUpdatedEvent,
  type DmsActionStatusChangedEvent,
  type DmsDocumentFlaggedEvent,
  type DmsReconciliationCompletedEvent,
  type InvoiceCreatedEvent,
  type InvoiceUpdatedEvent,
  type InvoiceVoidedEvent,
  type OrderCreatedEvent,
  type OrderStatusChangedEvent,
  type PaymentCreatedEvent,
  type PaymentReversedEvent,
  type PaymentUpdatedEvent,
  type ProductCreatedEvent,
  type ProductUpdatedEvent,
  type SettlementClosedEvent,
  type SettlementUpdatedEvent,
  type StockMovementCreatedEvent,
  type TripClosedEvent,
  type WebhookTestEvent,
} from './webhook-event.js';
export {
  createEventGate,
  DEFAULT_EVENT_LEASE_MS,
  MemoryEventGateStore,
  type EventClaim,
  type EventGate,
  type EventGateOptions,
  type EventGateStore,
  type EventOutcome,
} from './event-gate.js';
