// One interface describing every table. Times are RFC 3339 UTC strings with milliseconds (they sort
// as text), JSON documents are text, and booleans are 0/1 integers, the same in both dialects.
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  /** The first characters of the key, shown in listings. */
  prefix: string;
  /** SHA-256 of the whole key, hex. */
  hash: string;
  scopes: string;
  /** What the key is for, as whoever made it wrote it ('' for keys made before keys had names). */
  name: string;
  created_at: string;
  revoked_at: string | null;
}

export interface OAuthClientsTable {
  id: string;
  client_id: string;
  account_id: string;
  name: string;
  /** SHA-256 (hex) of the client secret, which the service generates with 238 random bits (docs/decisions.md). */
  secret_hash: string;
  scopes: string;
  /** JSON array of exact-match redirect URIs. */
  redirect_uris: string;
  created_at: string;
  revoked_at: string | null;
}

export interface SigningKeysTable {
  kid: string;
  /** What the key signs: `access_token` or `stamp`. */
  purpose: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: string;
  retired_at: string | null;
}

export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

export interface CountersTable {
  name: string;
  value: number;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  request_hash: string;
  /** null while the first request is still being handled. */
  status_code: number | null;
  content_type: string | null;
  response_body: string | null;
  created_at: string;
  /** 1 once a transaction of the request's work has committed (set inside that transaction). */
  work_committed: Generated<number>;
}

export interface DomainEventsTable {
  id: string;
  account_id: string;
  type: string;
  /** The id of what the event is about: the shipment, or for `batch.completed` the batch. */
  shipment_id: string;
  /** JSON: the event's `data` as delivered to webhooks. */
  data: string;
  created_at: string;
  /** Set once the webhook fan-out has created its deliveries. */
  dispatched_at: string | null;
}

export interface ShipmentsTable {
  id: string;
  account_id: string;
  carrier: string;
  service: string;
  from_address: string;
  to_address: string;
  parcel: string;
  reference: string | null;
  /** JSON array of the label messages (§10), or null. */
  messages: string | null;
  /** JSON of the customs declaration as sent (§12), or null. */
  customs: string | null;
  /** The shipment this one returns (§13), or null. */
  return_of: string | null;
  status: string;
  /** The active label, kept here so the shipment shows it without a join (labels set these). */
  label_id: string | null;
  tracking_number: string | null;
  created_at: string;
  updated_at: string;
  /** The customer's name and company (the recipient's, a return's sender's) as the list's search compares them (`searchFold`, shipments/store.ts); written once, never read back. */
  recipient_search: string;
}

export interface LabelsTable {
  id: string;
  account_id: string;
  shipment_id: string;
  carrier: string;
  service: string;
  tracking_number: string;
  /** The format asked for at creation; retrieval may ask for another. */
  format: string;
  size: string;
  /** `active` or `invalidated`. */
  status: string;
  /** JSON snapshot of everything printed, so rendering is deterministic from stored data. */
  label_data: string;
  created_at: string;
  expires_at: string;
  invalidated_at: string | null;
  /** The manifest the label is on (§14), or null. */
  manifest_id: string | null;
  /** 1 for the label of a return (§13), which goes on no manifest; else 0. */
  is_return: number;
}

export interface StampsTable {
  id: string;
  account_id: string;
  shipment_id: string;
  carrier: string;
  /** `ST-<issuer code>-<number>`, unique across the service, monotonic per account. */
  serial: string;
  /** The format asked for at creation: PDF, PNG or ZPL. */
  format: string;
  /** `active` or `invalidated` (expiry is derived from expires_at). */
  status: string;
  /** The compact JWS printed in the DataMatrix; everything the stamp shows is in it. */
  indicium: string;
  created_at: string;
  expires_at: string;
  invalidated_at: string | null;
}

export interface StampIssuersTable {
  account_id: string;
  code: number;
  created_at: string;
}

export interface TrackingEventsTable {
  id: string;
  label_id: string;
  account_id: string;
  /** The carrier that reported the event (a parcel can be handed between carriers). */
  carrier: string;
  status: string;
  /** The reporting carrier's own code for `status`. */
  carrier_code: string;
  /** When the event happened, normalised to UTC with milliseconds. */
  timestamp: string;
  location: string;
  description: string;
  created_at: string;
}

export interface LabelTrackingTable {
  label_id: string;
  account_id: string;
  /** The status of the latest event. */
  status: string;
  last_event_at: string | null;
  /** null once no delivery is expected any more (returned to sender). */
  estimated_delivery: string | null;
  updated_at: string;
}

export interface SandboxParcelsTable {
  label_id: string;
  account_id: string;
  /** `delivered`, `exception` or `returned`: where the sandbox carrier takes this parcel; `taken_over` when API events came first. */
  outcome: string;
  /** Steps done so far. */
  step: number;
  /** When the next step is due; null when the parcel is done or was taken over. */
  next_at: string | null;
  created_at: string;
}

export interface UsersTable {
  id: string;
  account_id: string;
  /** Trimmed and lower-cased. */
  email: string;
  /** scrypt: `scrypt$<salt b64>$<hash b64>`. */
  password_hash: string;
  created_at: string;
  /** Set by `npm run admin -- user disable`: the user can no longer sign in. */
  disabled_at: string | null;
}

export interface OAuthAuthorizationRequestsTable {
  id: string;
  client_id: string;
  redirect_uri: string;
  /** 1 when the request named the redirect URI (the token request must then repeat it). */
  redirect_uri_explicit: number;
  scope: string;
  state: string | null;
  code_challenge: string;
  /** SHA-256 of the browser-binding cookie. */
  browser_hash: string;
  csrf_token: string;
  /** Set once the user has signed in. */
  user_id: string | null;
  created_at: string;
  expires_at: string;
  completed_at: string | null;
  /** The client address that opened it (null for rows older than that column). */
  client_address: string | null;
}

export interface OAuthTokenFamiliesTable {
  id: string;
  client_id: string;
  account_id: string;
  user_id: string;
  scope: string;
  created_at: string;
  last_used_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
}

export interface OAuthAuthorizationCodesTable {
  /** SHA-256 of the code, hex. */
  code_hash: string;
  family_id: string;
  client_id: string;
  redirect_uri: string;
  redirect_uri_explicit: number;
  code_challenge: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface OAuthRefreshTokensTable {
  /** SHA-256 of the token, hex. */
  token_hash: string;
  family_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface SignInFailuresTable {
  id: string;
  /** `email:<address>` or `ip:<address>`. */
  key: string;
  created_at: string;
}

export interface WebhooksTable {
  id: string;
  account_id: string;
  url: string;
  /** JSON array of event kinds. */
  events: string;
  /** AES-256-GCM ciphertext of the signing secret (src/webhooks/secret-box.ts), or null for none. */
  secret: string | null;
  active: number;
  created_at: string;
  updated_at: string;
  /** First failed attempt since the last success; five days of this disables the webhook. */
  failing_since: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  account_id: string;
  /** The domain event's id: the `webhook-id` header of every attempt. */
  event_id: string;
  type: string;
  /** `pending`, `succeeded` or `failed`. */
  status: string;
  /** Attempts in the current run of the retry schedule (a redelivery starts a new run). */
  attempt_count: number;
  /** When the next attempt is due (while in flight: the end of the claim); null when done or paused. */
  next_attempt_at: string | null;
  /** A worker's claim (the end of its lease): its result is recorded only while this is unchanged. */
  locked_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  at: string;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
}

export interface RenderedDocumentsTable {
  /** documentKey (src/render/renderer.ts): what the document was drawn from, and the renderer's version. */
  key: string;
  body: Uint8Array;
  bytes: number;
  created_at: string;
}

export interface DashboardSessionsTable {
  /** SHA-256 (hex) of the session cookie's token. */
  id: string;
  user_id: string;
  account_id: string;
  created_at: string;
  expires_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  oauth_clients: OAuthClientsTable;
  signing_keys: SigningKeysTable;
  service_secrets: ServiceSecretsTable;
  counters: CountersTable;
  idempotency_keys: IdempotencyKeysTable;
  domain_events: DomainEventsTable;
  shipments: ShipmentsTable;
  labels: LabelsTable;
  stamps: StampsTable;
  stamp_issuers: StampIssuersTable;
  tracking_events: TrackingEventsTable;
  label_tracking: LabelTrackingTable;
  sandbox_parcels: SandboxParcelsTable;
  users: UsersTable;
  oauth_authorization_requests: OAuthAuthorizationRequestsTable;
  oauth_token_families: OAuthTokenFamiliesTable;
  oauth_authorization_codes: OAuthAuthorizationCodesTable;
  oauth_refresh_tokens: OAuthRefreshTokensTable;
  signin_failures: SignInFailuresTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  rendered_documents: RenderedDocumentsTable;
  rate_limit_buckets: RateLimitBucketsTable;
  account_logos: AccountLogosTable;
  batches: BatchesTable;
  batch_items: BatchItemsTable;
  print_files: PrintFilesTable;
  dashboard_sessions: DashboardSessionsTable;
  manifests: ManifestsTable;
}

export interface ManifestsTable {
  id: string;
  account_id: string;
  carrier: string;
  /** The manifest's own number, printed and in its barcode. */
  number: string;
  /** JSON array of label ids. */
  label_ids: string;
  /** JSON of what the document prints. */
  document: string;
  created_at: string;
  expires_at: string;
  scanned_at: string | null;
}

/** An account's logo, 1-bit (src/labels/logo.ts): JSON of the renderer's Logo. */
export interface AccountLogosTable {
  account_id: string;
  logo: string;
  updated_at: string;
}

export interface BatchesTable {
  id: string;
  account_id: string;
  /** `processing` or `completed`. */
  status: string;
  format: string;
  size: string;
  total: number;
  succeeded: number;
  failed: number;
  /** Items below this index are done (each exactly once). */
  next_index: number;
  created_at: string;
  completed_at: string | null;
  /** What the caller named it (an uploaded file's name), or null. */
  name: string | null;
}

export interface BatchItemsTable {
  batch_id: string;
  idx: number;
  /** JSON: `{shipmentId}` or `{shipment}` as sent. */
  request: string;
  shipment_id: string | null;
  label_id: string | null;
  tracking_number: string | null;
  /** JSON `{code, message}` of a failed item. */
  error: string | null;
}

export interface PrintFilesTable {
  id: string;
  account_id: string;
  format: string;
  layout: string;
  start: number;
  /** `labels` or `customs` (their customs papers). */
  contents: string;
  /** Each parcel's customs papers this many times (1 for labels). */
  copies: number;
  batch_id: string | null;
  /** JSON array of label ids in print order. */
  label_ids: string;
  created_at: string;
  expires_at: string;
}

// Kept so later tables can use generated columns without a new import.
export type { Generated };

/**
 * Every column of a table, spelled out for a `select`: it does not compile while a column of `T` is
 * missing. A query naming its columns can be prepared on PostgreSQL (src/db/postgres.ts), where a
 * prepared `select *` would break when another process's migration adds a column.
 */
export function allColumns<T>() {
  return <const C extends readonly (keyof T & string)[]>(columns: C & ([Exclude<keyof T, C[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, C[number]> })): C => columns;
}

/** Token buckets of the rate limits, on PostgreSQL (src/http/rate-limit.ts). */
export interface RateLimitBucketsTable {
  key: string;
  /** Below zero: granted beyond the budget by processes that had not yet learnt of each other (debt). */
  tokens: number;
  updated_ms: string;
  /** Always true; no longer read (kept so that a process of an older version can still write its rows). */
  allowed: boolean;
}
