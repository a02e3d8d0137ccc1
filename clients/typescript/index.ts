// A typed client of the API: openapi-fetch over the types that `npm run client` generates from the
// service's OpenAPI document (openapi.ts). Every path, parameter, body and answer is checked by the
// TypeScript compiler; errors come back as `{ error }` with the service's `{code, message, details}`.
// Documents (labels, print files, stamps, manifests) are bytes behind signed links: fetch the `url`, or
// ask the client for `parseAs: 'arrayBuffer'` (it parses JSON unless told otherwise). The token endpoint
// takes a form: `POST /oauth/token` with `bodySerializer: (b) => new URLSearchParams(b).toString()` and
// `headers: { 'content-type': 'application/x-www-form-urlencoded' }`.
//
//   const api = createShippingClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.KEY });
//   const { data: shipment, error } = await api.POST('/v1/shipments', { body: { … } });
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.ts';

export type { components, operations, paths };

export type Address = components['schemas']['Address'];
export type Parcel = components['schemas']['Parcel'];
export type Shipment = components['schemas']['Shipment'];
export type Label = components['schemas']['Label'];
export type Stamp = components['schemas']['Stamp'];
export type TrackingInfo = components['schemas']['TrackingInfo'];
export type Webhook = components['schemas']['Webhook'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type Customs = components['schemas']['Customs'];
export type AddressValidation = components['schemas']['AddressValidation'];
export type Batch = components['schemas']['Batch'];
export type BatchWithItems = components['schemas']['BatchWithItems'];
export type PrintFile = components['schemas']['PrintFile'];
export type Manifest = components['schemas']['Manifest'];
export type TrackingEvent = components['schemas']['TrackingEvent'];
export type ApiError = components['schemas']['Error'];

export interface ClientOptions {
  /** The service's address without `/v1`, e.g. `http://localhost:8080` (PUBLIC_BASE_URL). */
  baseUrl: string;
  /** An API key (`sk_test_…`), sent as `X-API-Key`. */
  apiKey?: string;
  /** Or an OAuth 2.0 access token, sent as `Authorization: Bearer` (not both: the service refuses two credentials). */
  accessToken?: string;
  /** Another fetch (a test's, or one with a proxy). */
  fetch?: typeof globalThis.fetch;
}

export type ShippingClient = Client<paths>;

export function createShippingClient(options: ClientOptions): ShippingClient {
  if (options.apiKey && options.accessToken) throw new TypeError('give apiKey or accessToken, not both: the service refuses a request with two credentials');
  const headers: Record<string, string> = {};
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.accessToken) headers.authorization = `Bearer ${options.accessToken}`;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    // Arrays as the document declares them (style form, explode false): `ids=a,b`, not `ids=a&ids=b`.
    querySerializer: { array: { style: 'form', explode: false } },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
