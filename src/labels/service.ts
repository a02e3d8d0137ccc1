import { labelsCreated } from '../metrics.ts';
import type { AppContext } from '../context.ts';
import type { Db, Tx } from '../db/index.ts';
import type { Page } from '../db/page.ts';
import { isUniqueViolation, nextCounter } from '../db/index.ts';
import { isoNow, parseRfc3339, plusRestored, storedBound, uuidv7 } from '../db/ids.ts';
import { Conflict, Forbidden, Gone, InvalidInput, NotFound } from '../errors.ts';
import { findService, trackingNumberFor, trackingSerials, type Carrier } from '../carriers/index.ts';
import type { Download } from '../http/downloads.ts';
import { cacheableUntil, linkDeadline, signedLink, verifiedLinkExpiry } from '../http/signed-links.ts';
import { LABEL_FORMATS, type DocumentSource, type LabelData, type LabelFormat, type LabelSize, type Logo } from '../render/index.ts';
import { documentsFor, type CustomsDocument } from '../render/layouts/customs.ts';
import { customsForm } from '../carriers/customs.ts';
import { accountShipmentsByIds, attachLabel, detachLabel, getShipment, routeRefusal, type Shipment } from '../shipments/service.ts';
import { logoFromImage } from './logo.ts';
import * as store from './store.ts';

export const DOWNLOAD_VALIDITY_MS = 24 * 3600 * 1000;

export interface NewLabel {
  shipmentId: string;
  format: LabelFormat;
  size: LabelSize;
}

export interface Label {
  id: string;
  shipmentId: string;
  format: LabelFormat;
  size: LabelSize;
  url: string;
  createdAt: string;
  expiresAt: string;
  trackingNumber: string;
  carrier: Carrier;
  status: 'active' | 'invalidated';
  documents?: LabelDocument[];
}

/** A customs document of a label (§12) with its signed link. */
export interface LabelDocument {
  type: CustomsDocument;
  url: string;
}

function documentLinks(ctx: AppContext, row: Pick<store.LabelRow, 'id' | 'expires_at'>, data: Pick<LabelData, 'customs' | 'customsForm'>): LabelDocument[] {
  return documentsFor(data).map((type) => ({ type, url: signedLink(ctx.urlKey, ctx.config.baseUrl, 'label-documents', row.id, type, row.expires_at) }));
}

/**
 * The customs documents of those of the account's active labels among `ids` that have any, by label
 * id: a batch's page links them, and offers their print file. A label past its 24 hours has no links
 * (they would answer 410), an empty list, though its papers still print in a print file.
 */
export async function customsDocumentsOf(ctx: AppContext, accountId: string, ids: string[]): Promise<Map<string, LabelDocument[]>> {
  const rows = await store.findLabelsWithCustoms(ctx.db, accountId, ids);
  const now = isoNow();
  return new Map(rows.map((r) => [r.id, r.expires_at > now ? documentLinks(ctx, r, JSON.parse(r.label_data) as LabelData) : []]));
}

/** The label as the API shows it, with a download link signed for `format`. */
export function toLabel(ctx: AppContext, row: store.LabelRow, format: LabelFormat): Label {
  // Parsed only when it holds customs: most labels have none, and the snapshot may carry the
  // account's logo, far larger than the rest of the read.
  const documents = row.label_data.includes('"customsForm"') ? documentLinks(ctx, row, JSON.parse(row.label_data) as LabelData) : [];
  return {
    id: row.id,
    shipmentId: row.shipment_id,
    format,
    size: row.size as LabelSize,
    url: signedLink(ctx.urlKey, ctx.config.baseUrl, 'labels', row.id, format, row.expires_at),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    trackingNumber: row.tracking_number,
    carrier: row.carrier as Carrier,
    status: row.status as Label['status'],
    ...(documents.length ? { documents } : {}),
  };
}

function alreadyLabelled(shipmentId: string, labelId: string | undefined): Conflict {
  return new Conflict(
    labelId
      ? `shipment ${shipmentId} already has an active label ${labelId}; invalidate it before creating another`
      : `shipment ${shipmentId} already has an active label; invalidate it before creating another`,
  );
}

export async function createLabel(ctx: AppContext, accountId: string, input: NewLabel): Promise<Label> {
  // Shipments never change carrier, service, addresses or parcel, so reading one outside the transaction is safe.
  const shipment = await getShipment(ctx.db, accountId, input.shipmentId);
  let row: store.LabelRow;
  try {
    row = await ctx.db.transaction().execute((tx) => insertLabelFor(ctx, tx, accountId, shipment, input));
  } catch (err) {
    // The partial unique index decided a race between two requests for the same shipment.
    if (!isUniqueViolation(err)) throw err;
    const winner = await store.findActiveLabel(ctx.db, accountId, shipment.id);
    throw alreadyLabelled(shipment.id, winner?.id);
  }
  labelsCreated.inc({ carrier: row.carrier, format: row.format });
  return toLabel(ctx, row, input.format);
}

/**
 * Issues the label of `shipment` inside the caller's transaction (the API's own, or a batch item's):
 * 409 if it has an active label, 400 if its service is gone. A race with another label for the same
 * shipment ends in a unique violation that rolls the transaction back.
 */
export async function insertLabelFor(ctx: AppContext, tx: Tx, accountId: string, shipment: Shipment, input: Omit<NewLabel, 'shipmentId'>): Promise<store.LabelRow> {
  // The shipment carries its active label (written in the same transaction as the label itself).
  if (shipment.label) throw alreadyLabelled(shipment.id, shipment.label.id);
  const service = findService(shipment.carrier, shipment.service);
  if (!service) throw new InvalidInput(`shipment ${shipment.id} has service ${shipment.service}, which ${shipment.carrier} no longer offers`);
  const refusal = routeRefusal(shipment);
  if (refusal) {
    const message = `shipment ${shipment.id} was taken before services were checked against their routes and cannot be labelled as it is (${refusal.field}: ${refusal.message}); create the shipment again`;
    throw new InvalidInput(message, [{ field: 'shipmentId', message }]);
  }
  const now = Date.now();
  const id = uuidv7(now);
  const createdAt = isoNow(now);
  // The counter is the first write, so the transaction takes its lock before anything else; a
  // rollback (a 409) gives the serial back unused, and a committed one is never issued again.
  const serial = await nextCounter(tx, trackingSerials(shipment.carrier, shipment.service).counter);
  const trackingNumber = trackingNumberFor(shipment.carrier, BigInt(serial), shipment.service);
  const logo = await store.findLogo(tx, accountId);
  const originalExport = shipment.returnOf && shipment.customs ? await originalWaybill(tx, accountId, shipment.returnOf) : undefined;
  const data: LabelData = {
    labelId: id,
    carrier: shipment.carrier,
    serviceCode: service.code,
    serviceName: service.name,
    trackingNumber,
    size: input.size,
    shipDate: createdAt,
    from: shipment.from,
    to: shipment.to,
    parcel: shipment.parcel,
    ...(shipment.reference !== undefined ? { reference: shipment.reference } : {}),
    ...(shipment.messages?.length ? { messages: shipment.messages } : {}),
    ...(logo ? { logo: JSON.parse(logo) as Logo } : {}),
    ...(shipment.customs ? { customs: shipment.customs, customsForm: customsForm(shipment.customs, ctx.config.sdrRates, service) } : {}),
    ...(shipment.returnOf ? { isReturn: true } : {}),
    ...(originalExport ? { originalExport } : {}),
  };
  const row: store.LabelRow = {
    id,
    account_id: accountId,
    shipment_id: shipment.id,
    carrier: shipment.carrier,
    service: shipment.service,
    tracking_number: trackingNumber,
    format: input.format,
    size: input.size,
    status: 'active',
    label_data: JSON.stringify(data),
    created_at: createdAt,
    expires_at: isoNow(now + DOWNLOAD_VALIDITY_MS),
    invalidated_at: null,
    manifest_id: null,
    is_return: shipment.returnOf ? 1 : 0,
  };
  await store.insertLabel(tx, row);
  await attachLabel(tx, shipment.id, { id, trackingNumber }, createdAt);
  return row;
}

/**
 * The waybill the original of a return went out with: its active label's tracking number and date,
 * which customs ask for to give returned goods their relief. None when the original has no active label.
 */
async function originalWaybill(tx: Tx, accountId: string, originalId: string): Promise<LabelData['originalExport']> {
  const [original] = await accountShipmentsByIds(tx, accountId, [originalId]);
  const label = original?.label ? await store.findLabelRecord(tx, accountId, original.label.id) : undefined;
  return label ? { trackingNumber: label.tracking_number, shipDate: label.created_at } : undefined;
}

// ---- the account's logo ----

/** `PUT /v1/account/logo`: printed on every label of the account created from now on. */
export async function setLogo(ctx: AppContext, accountId: string, body: Buffer, mediaType: string): Promise<void> {
  const logo = await logoFromImage(body, mediaType);
  await store.upsertLogo(ctx.db, accountId, JSON.stringify(logo), isoNow());
}

/** `DELETE /v1/account/logo`: labels created from now on have none (earlier labels keep theirs). */
export async function deleteLogo(ctx: AppContext, accountId: string): Promise<void> {
  await store.deleteLogo(ctx.db, accountId);
}

export interface LabelQuery {
  status?: 'active' | 'invalidated';
  carrier?: Carrier;
  created_after?: string;
  created_before?: string;
}

/** An RFC 3339 bound of a list as stored (UTC with milliseconds), or 400 naming the parameter. */
function bound(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = parseRfc3339(plusRestored(value));
  if (ms === null) {
    throw new InvalidInput(`query parameter ${name} must be an RFC 3339 date-time with an offset, like 2026-01-01T10:00:00Z`, [{ field: name, message: 'is not an RFC 3339 date-time with an offset' }]);
  }
  return storedBound(ms);
}

/** `GET /v1/labels`: this account's labels, newest first, each as `GET /v1/labels/{id}` shows it in PDF. */
export async function listLabels(ctx: AppContext, accountId: string, page: Page, query: LabelQuery): Promise<Label[]> {
  const rows = await store.listLabels(ctx.db, accountId, page, {
    ...(query.status ? { status: query.status } : {}),
    ...(query.carrier ? { carrier: query.carrier } : {}),
    ...(query.created_after !== undefined ? { createdAfter: bound('created_after', query.created_after) } : {}),
    ...(query.created_before !== undefined ? { createdBefore: bound('created_before', query.created_before) } : {}),
  });
  return rows.map((row) => toLabel(ctx, row, 'PDF'));
}

export async function getLabel(ctx: AppContext, accountId: string, id: string, format: LabelFormat): Promise<Label> {
  const row = await store.findLabel(ctx.db, accountId, id);
  if (!row) throw new NotFound('label', id);
  return toLabel(ctx, row, format);
}

/**
 * Idempotent: an already invalidated label stays so. Clears the shipment's active label. A label on a
 * manifest, or whose parcel the carrier has scanned, is 409.
 */
export async function invalidateLabel(ctx: AppContext, accountId: string, id: string): Promise<void> {
  const changed = await ctx.db.transaction().execute(async (tx) => {
    const now = isoNow();
    const row = await store.invalidateLabel(tx, accountId, id, now);
    if (!row) return false;
    // The shipment's status follows this label's tracking: once the carrier has scanned the parcel,
    // the postage is used, and the throw rolls the label's invalidation back.
    const scanned = await detachLabel(tx, row.shipment_id, now);
    if (scanned) throw new Conflict(`label ${id}'s parcel is already ${scanned.replaceAll('_', ' ')} (shipment ${row.shipment_id}): the carrier has scanned it, so the label can no longer be invalidated`);
    return true;
  });
  if (changed) return;
  const row = await store.findLabel(ctx.db, accountId, id);
  if (!row) throw new NotFound('label', id);
  if (row.manifest_id) throw new Conflict(`label ${id} is on manifest ${row.manifest_id}: the carrier has it, so it can no longer be invalidated`);
}

export interface DownloadRequest {
  id: string;
  format: string;
  expires: string;
  sig: string;
  dpi: 203 | 300;
}

/** The label behind a signed link of `kind`: 403 if tampered or foreign, 410 if expired or invalidated. */
async function linkedLabel(ctx: AppContext, kind: 'labels' | 'label-documents', req: Omit<DownloadRequest, 'dpi'>): Promise<{ row: store.LabelRow; until: number; now: number }> {
  const expires = verifiedLinkExpiry(ctx.urlKey, kind, req);
  const row = await store.findLabelForDownload(ctx.db, req.id);
  if (!row) throw new NotFound('label', req.id);
  if (row.status !== 'active') throw new Gone(`label ${row.id} was invalidated and can no longer be downloaded`);
  const now = Date.now();
  const until = linkDeadline(expires, row.expires_at);
  if (now >= until) throw new Gone(`the download link of label ${row.id} expired at ${row.expires_at}`);
  return { row, until, now };
}

/** A customs document of a label (§12), behind a signed link that behaves like the label's. */
export async function openDocumentDownload(ctx: AppContext, req: Omit<DownloadRequest, 'dpi'>): Promise<Download> {
  const { row, until, now } = await linkedLabel(ctx, 'label-documents', req);
  const data = JSON.parse(row.label_data) as LabelData;
  const document = req.format as CustomsDocument;
  if (!documentsFor(data).includes(document)) throw new NotFound('document', `${req.format} of label ${row.id}`);
  const source: DocumentSource = { layout: 'customs', data: { document, label: data } };
  return {
    ...ctx.renderer.prepare(source, 'PDF'),
    cacheControl: cacheableUntil(until, now),
    filename: `${document}-${row.tracking_number}`,
  };
}

/** Checks a signed link (403 if tampered or foreign, 410 if expired or invalidated) and prepares the document. */
export async function openDownload(ctx: AppContext, req: DownloadRequest): Promise<Download> {
  const { row, until, now } = await linkedLabel(ctx, 'labels', req);
  const format = req.format as LabelFormat;
  if (!(LABEL_FORMATS as readonly string[]).includes(format)) throw new Forbidden('the download link is not valid');
  const source: DocumentSource = { layout: 'label', data: JSON.parse(row.label_data) as LabelData };
  return {
    ...ctx.renderer.prepare(source, format, req.dpi),
    cacheControl: cacheableUntil(until, now),
    filename: `label-${row.tracking_number}`,
  };
}

// ---- what tracking reads of labels ----

/** A label as tracking and the sandbox carrier see it. */
export type LabelRecord = store.LabelRecord;

/** This account's labels with these tracking numbers (another account's numbers are simply absent). */
export function labelsByTrackingNumbers(tx: Db | Tx, accountId: string, numbers: string[]): Promise<LabelRecord[]> {
  return store.findLabelsByTrackingNumbers(tx, accountId, numbers);
}

/** The label of this account, or of any account when `accountId` is null (the sandbox carrier's jobs). */
export function labelRecord(db: Db | Tx, accountId: string | null, id: string): Promise<LabelRecord | undefined> {
  return store.findLabelRecord(db, accountId, id);
}

/** Active labels with ids above `afterId` (ids sort by creation time), oldest first. */
export function activeLabelsAfter(db: Db, afterId: string, limit: number): Promise<LabelRecord[]> {
  return store.activeLabelsAfter(db, afterId, limit);
}

/** This account's labels with these ids, with what a print file needs (another account's are absent). */
export function labelsForPrint(db: Db, accountId: string, ids: string[]): Promise<Pick<store.LabelRow, 'id' | 'status' | 'label_data'>[]> {
  return store.findLabelsForPrint(db, accountId, ids);
}

// ---- what manifests (§14) do to labels, inside their own transactions ----

/** A label as a manifest takes and prints it. */
export interface ManifestedLabel {
  id: string;
  trackingNumber: string;
  serviceName: string;
  weight: LabelData['parcel']['weight'];
  /** The sender as on the label: a manifest is one place's (docs/manifests.md). */
  from: LabelData['from'];
}

function manifested(row: Pick<store.LabelRow, 'id' | 'tracking_number' | 'label_data'>): ManifestedLabel {
  const d = JSON.parse(row.label_data) as LabelData;
  return { id: row.id, trackingNumber: row.tracking_number, serviceName: d.serviceName, weight: d.parcel.weight, from: d.from };
}

/** The id of the manifest this account's label is on, or null (then it can still be invalidated). */
export async function manifestOfLabel(ctx: AppContext, accountId: string, labelId: string): Promise<string | null> {
  return (await store.manifestOf(ctx.db, accountId, labelId)) ?? null;
}

/** The tracking numbers of a manifest's labels, in label-id order. */
export function trackingNumbersOnManifest(db: Db | Tx, manifestId: string): Promise<string[]> {
  return store.trackingNumbersOnManifest(db, manifestId);
}

/**
 * The labels a manifest of the carrier made now could take (§14), in id order: the account's active
 * labels of the carrier on no manifest yet, but returns' labels, which go to the carrier from the
 * customer, not in the sender's truck (docs/manifests.md).
 */
export async function labelsWaitingForManifest(db: Db | Tx, accountId: string, carrier: Carrier): Promise<ManifestedLabel[]> {
  return (await store.findWaitingForManifest(db, accountId, carrier)).map(manifested);
}

/**
 * The labels named for a manifest, in the order given, each checked: 404 unknown or foreign (the first
 * such, wherever it is), then in order 409 invalidated, 400 another carrier, 409 on another manifest,
 * 400 a return's, each naming the label. Nothing is claimed here (`claimForManifest`).
 */
export async function labelsNamedForManifest(tx: Tx, accountId: string, carrier: Carrier, ids: string[]): Promise<ManifestedLabel[]> {
  const rows = new Map((await store.findLabelsForManifest(tx, accountId, ids)).map((r) => [r.id, r]));
  // A label that is not the account's is named first, wherever it is in the list (as for a print file).
  const unknown = ids.find((id) => !rows.has(id));
  if (unknown) throw new NotFound('label', unknown);
  return ids.map((id, i) => {
    const row = rows.get(id)!;
    if (row.status !== 'active') throw new Conflict(`label ${id} is invalidated and cannot go on a manifest`);
    if (row.carrier !== carrier) throw new InvalidInput(`label ${id} is a ${row.carrier} label, not ${carrier}`, [{ field: `labelIds[${i}]`, message: `is a ${row.carrier} label, not ${carrier}` }]);
    if (row.manifest_id) throw new Conflict(`label ${id} is already on manifest ${row.manifest_id}`);
    if (row.is_return) throw new InvalidInput(`label ${id} is a return's label: the customer hands it to the carrier, so it goes on no manifest`, [{ field: `labelIds[${i}]`, message: "is a return's label, which goes on no manifest" }]);
    return manifested(row);
  });
}

/**
 * Puts the labels `ids` on manifest `manifestId` by conditional UPDATEs (in id order, as every writer
 * locks them) and returns the ids it put on it: a label that went on another manifest or was
 * invalidated since it was read is left out, so two manifests made at the same moment never share one.
 */
export async function claimForManifest(tx: Tx, accountId: string, ids: string[], manifestId: string): Promise<Set<string>> {
  return new Set(await store.claimLabels(tx, accountId, ids, manifestId));
}
