// End of day (contract §14): a manifest is one form standing for every parcel one place hands to a
// carrier (returns' labels are not: the customer hands those over, docs/manifests.md). Its labels are
// checked to come from one place, then claimed by conditional UPDATEs in the manifest's transaction,
// so two manifests made at the same moment never share a label, and a label on a manifest can no
// longer be invalidated. Outside production the sandbox carrier scans each manifest once, one
// sandbox step after it was made: every label on it gets its "Accepted at origin facility" event.
import type { AppContext } from '../context.ts';
import { nextCounter, type Tx } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import type { Page } from '../db/page.ts';
import { AppError, Conflict, Gone, InvalidInput, NotFound } from '../errors.ts';
import { canonicalPostal } from '../countries.ts';
import type { Download } from '../http/downloads.ts';
import { cacheableUntil, linkDeadline, signedLink, verifiedLinkExpiry } from '../http/signed-links.ts';
import { grams } from '../carriers/customs.ts';
import type { Carrier } from '../carriers/services.ts';
import { uspsCheckDigit } from '../carriers/usps.ts';
import { DOWNLOAD_VALIDITY_MS, claimForManifest, labelsNamedForManifest, labelsWaitingForManifest, trackingNumbersOnManifest, type ManifestedLabel } from '../labels/service.ts';
import type { DocumentSource } from '../render/index.ts';
import type { ManifestData } from '../render/layouts/manifest.ts';
import { acceptParcels } from '../tracking/service.ts';
import * as store from './store.ts';

export interface NewManifest {
  carrier: Carrier;
  labelIds?: string[];
  /** Without labelIds: only the waiting labels sent from this postal code. */
  fromPostalCode?: string;
}

export interface Manifest {
  id: string;
  carrier: Carrier;
  number: string;
  labelCount: number;
  labelIds: string[];
  createdAt: string;
  url: string;
  expiresAt: string;
}

function toManifest(ctx: AppContext, row: store.ManifestRow): Manifest {
  const labelIds = JSON.parse(row.label_ids) as string[];
  return {
    id: row.id,
    carrier: row.carrier as Carrier,
    number: row.number,
    labelCount: labelIds.length,
    labelIds,
    createdAt: row.created_at,
    url: signedLink(ctx.urlKey, ctx.config.baseUrl, 'manifests', row.id, 'PDF', row.expires_at),
    expiresAt: row.expires_at,
  };
}

/**
 * The manifest's own number: for USPS the 22 digits of a SCAN form's electronic file number (9475, the
 * serial, and the IMpb's mod 10 check digit, as its barcode is read), else the carrier's prefix and 10 digits.
 */
function manifestNumber(carrier: Carrier, serial: number): string {
  if (carrier === 'USPS') {
    const digits = `9475${String(serial).padStart(17, '0')}`;
    return `${digits}${uspsCheckDigit(digits)}`;
  }
  return `${{ UPS: 'UPSM', FedEx: 'FDXM', DHL: 'DHLM' }[carrier]}${String(serial).padStart(10, '0')}`;
}

// ---- one place a manifest ----

type Sender = ManifestedLabel['from'];

/** The waiting labels of one sender place, in id order. */
export interface SenderPlace {
  /** The place compared: its address without the person, trimmed, spaces collapsed, case folded. */
  key: string;
  /** The place on one line as its first label gives it: `4100 Distribution Dr, Memphis, TN 38118, US`. */
  name: string;
  labels: ManifestedLabel[];
}

const tidy = (s: string | undefined) => (s ?? '').trim().replace(/\s+/g, ' ');
// Upper then lower case folds case fully, so `STRASSE` and `Straße` are one street.
const folded = (s: string | undefined) => tidy(s).normalize('NFC').toUpperCase().toLowerCase();

/**
 * Where a label's parcel is handed over: its sender's address without the person (name, company, phone
 * and e-mail do not count: two shops in one building share a truck). The postal code is compared in its
 * country's spelling (`sw1a2aa` is `SW1A 2AA`).
 */
function placeKey(from: Sender): string {
  return JSON.stringify([from.street1, from.street2, from.city, from.state, postalOf(from.country, from.postalCode), tidy(from.country).toUpperCase()].map(folded));
}

/** A postal code in its country's spelling; a US ZIP+4 as its ZIP, since the +4 names a delivery point, not a place. */
function postalOf(country: string, postalCode: string | undefined): string {
  if (!postalCode) return '';
  const code = canonicalPostal(tidy(country).toUpperCase(), postalCode);
  return tidy(country).toUpperCase() === 'US' ? code.slice(0, 5) : code;
}

function placeName(from: Sender): string {
  const locality = [tidy(from.state), tidy(from.postalCode)].filter(Boolean).join(' ');
  return [from.street1, from.street2, from.city, locality, from.country].map(tidy).filter(Boolean).join(', ');
}

/** Whether the place's postal code is `postalCode`, both in the place's country's spelling (a US ZIP+4 as its ZIP). */
function atPostalCode(place: SenderPlace, postalCode: string): boolean {
  const from = place.labels[0]!.from;
  return from.postalCode !== undefined && postalOf(from.country, postalCode) === postalOf(from.country, from.postalCode);
}

/** The labels grouped by place, each place in the order of its first label. */
function placesOf(labels: ManifestedLabel[]): SenderPlace[] {
  const places = new Map<string, SenderPlace>();
  for (const l of labels) {
    const key = placeKey(l.from);
    const place = places.get(key);
    if (place) place.labels.push(l);
    else places.set(key, { key, name: placeName(l.from), labels: [l] });
  }
  return [...places.values()];
}

const counted = (n: number) => `${n} ${n === 1 ? 'label' : 'labels'}`;
const listed = (places: SenderPlace[]) => places.map((p) => `${p.name} (${counted(p.labels.length)})`).join('; ');

/** The places the carrier's waiting labels are sent from, each with its labels: the dashboard's "Close the day" asks for one. */
export async function placesWaitingForManifest(ctx: AppContext, accountId: string, carrier: Carrier): Promise<SenderPlace[]> {
  return placesOf(await labelsWaitingForManifest(ctx.db, accountId, carrier));
}

/**
 * The labels a manifest takes: the named ones, from one place (400 naming the first from another place
 * than labelIds[0]'s); or the carrier's waiting labels of one place: every one sent from `fromPostalCode`
 * (the caller says they are one place's, however their streets are written), those of the place the
 * dashboard chose by its key, or of the only place they come from (422 MIXED_SENDERS when several).
 */
async function labelsFor(tx: Tx, accountId: string, input: NewManifest, place: string | undefined): Promise<{ labels: ManifestedLabel[]; named: boolean }> {
  const { carrier } = input;
  if (input.labelIds) {
    if (input.fromPostalCode !== undefined) throw new InvalidInput('give labelIds or fromPostalCode, not both', [{ field: 'fromPostalCode', message: 'cannot be given with labelIds' }]);
    const labels = await labelsNamedForManifest(tx, accountId, carrier, input.labelIds);
    const first = placeKey(labels[0]!.from);
    const i = labels.findIndex((l) => placeKey(l.from) !== first);
    if (i > 0) {
      const [here, there] = [placeName(labels[i]!.from), placeName(labels[0]!.from)];
      throw new InvalidInput(`label ${labels[i]!.id} is sent from ${here}, labelIds[0] from ${there}: a manifest is one place's end of day, so close each place's day on its own manifest`, [{ field: `labelIds[${i}]`, message: `is sent from ${here}, not from ${there} as labelIds[0]` }]);
    }
    return { labels, named: true };
  }
  const waiting = placesOf(await labelsWaitingForManifest(tx, accountId, carrier));
  let places = waiting;
  const postal = input.fromPostalCode;
  if (postal !== undefined) places = places.filter((p) => atPostalCode(p, postal));
  if (place !== undefined) places = places.filter((p) => p.key === place);
  if (places.length === 0) {
    if (postal !== undefined && waiting.length > 0) throw nothingToManifest(`no active ${carrier} label of this account sent from postal code ${tidy(postal)} is waiting for a manifest; ${carrier} labels wait from ${listed(waiting)}`);
    throw nothingToManifest(`no active ${carrier} label of this account is waiting for a manifest${place === undefined ? '' : ' from that place'}`);
  }
  // Named by its postal code, the place is every address written there (`Dr` and `Drive`).
  if (postal !== undefined) return { labels: places.flatMap((p) => p.labels).sort((a, b) => (a.id < b.id ? -1 : 1)), named: false };
  if (places.length > 1) {
    throw new AppError(
      422,
      'MIXED_SENDERS',
      `the waiting ${carrier} labels come from ${places.length} places, and a manifest stands for one place's parcels: ${listed(places)}; close each place's day on its own manifest, with its fromPostalCode (or its labelIds); nothing was put on a manifest`,
    );
  }
  return { labels: places[0]!.labels, named: false };
}

function nothingToManifest(message: string): AppError {
  return new AppError(422, 'NOTHING_TO_MANIFEST', message);
}

/**
 * Makes a manifest of one place's labels (`labelsFor`). `place`, a `SenderPlace` key, is the dashboard's
 * choice among several places; API clients choose with `labelIds` or `fromPostalCode`.
 */
export async function createManifest(ctx: AppContext, accountId: string, input: NewManifest, place?: string): Promise<Manifest> {
  const row = await ctx.db.transaction().execute(async (tx) => {
    const now = Date.now();
    const id = uuidv7(now);
    // The place is checked before anything is claimed: a refusal leaves every label as it was.
    const chosen = await labelsFor(tx, accountId, input, place);
    const claimed = await claimForManifest(tx, accountId, chosen.labels.map((l) => l.id), id);
    if (chosen.named && claimed.size !== chosen.labels.length) {
      const taken = chosen.labels.find((l) => !claimed.has(l.id))!;
      throw new Conflict(`label ${taken.id} went on another manifest or was invalidated at the same moment; try again`);
    }
    // Waiting labels another manifest took meanwhile are left to it.
    const labels = chosen.labels.filter((l) => claimed.has(l.id));
    if (labels.length === 0) throw nothingToManifest(`no active ${input.carrier} label of this account is waiting for a manifest`);
    labels.sort((a, b) => (a.trackingNumber < b.trackingNumber ? -1 : 1));
    const services = new Map<string, { name: string; count: number; grams: number }>();
    for (const l of labels) {
      const s = services.get(l.serviceName) ?? { name: l.serviceName, count: 0, grams: 0 };
      s.count++;
      s.grams += grams(l.weight);
      services.set(l.serviceName, s);
    }
    const createdAt = isoNow(now);
    const number = manifestNumber(input.carrier, await nextCounter(tx, `manifest:${input.carrier}`));
    // One place, so the shipper is its sender: the first label's, in tracking-number order.
    const document: ManifestData = { number, carrier: input.carrier, createdAt, shipper: labels[0]!.from, services: [...services.values()], trackingNumbers: labels.map((l) => l.trackingNumber) };
    const r: store.ManifestRow = {
      id,
      account_id: accountId,
      carrier: input.carrier,
      number,
      label_ids: JSON.stringify(labels.map((l) => l.id)),
      document: JSON.stringify(document),
      created_at: createdAt,
      expires_at: isoNow(now + DOWNLOAD_VALIDITY_MS),
      scanned_at: null,
    };
    await store.insertManifest(tx, r);
    return r;
  });
  return toManifest(ctx, row);
}

export async function getManifest(ctx: AppContext, accountId: string, id: string): Promise<Manifest> {
  const row = await store.findManifest(ctx.db, accountId, id);
  if (!row) throw new NotFound('manifest', id);
  return toManifest(ctx, row);
}

export async function listManifests(ctx: AppContext, accountId: string, page: Page): Promise<Manifest[]> {
  return (await store.listManifests(ctx.db, accountId, page)).map((r) => toManifest(ctx, r));
}

/** A manifest's PDF behind its signed link (403 changed, 410 expired). */
export async function openManifestDownload(ctx: AppContext, req: { id: string; format: string; expires: string; sig: string }): Promise<Download> {
  const expires = verifiedLinkExpiry(ctx.urlKey, 'manifests', req);
  const row = await store.findManifestForDownload(ctx.db, req.id);
  if (!row) throw new NotFound('manifest', req.id);
  const now = Date.now();
  const until = linkDeadline(expires, row.expires_at);
  if (now >= until) throw new Gone(`the download link of manifest ${row.id} expired at ${row.expires_at}`);
  const source: DocumentSource = { layout: 'manifest', data: JSON.parse(row.document) as ManifestData };
  return {
    ...ctx.renderer.prepare(source, 'PDF'),
    cacheControl: cacheableUntil(until, now),
    filename: `manifest-${row.number}`,
  };
}

// ---- the sandbox carrier ----

export const ACCEPTED = 'Accepted at origin facility';

/**
 * Parcels accepted per statement group of a scan: each group's multi-row statements stay far below
 * PostgreSQL's 65,535 parameters (ten columns an event), however many labels a manifest holds.
 */
const SCAN_CHUNK = 1000;
/** Manifests scanned at most per run. */
const SCANS_PER_RUN = 10;
/** Failed manifests skipped over at most per run, however many there are. */
const MAX_PARKED = 100;
/** A failed scan's first wait before it is tried again; each failure doubles it, up to the most. */
const SCAN_RETRY_MS = 5000;
const MAX_SCAN_RETRY_MS = 3600_000;
/** Manifests whose scan failed in this process, with their failures and when to try again. */
const failedScans = new Map<string, { failures: number; retryAt: number }>();

/**
 * Worker job, outside production: scans each manifest one sandbox step after it was made. The scan
 * marks the manifest and records every label's `in_transit` event in one transaction, claimed by a
 * conditional UPDATE: with any number of workers, each label gets its event once.
 */
export async function scanManifests(ctx: AppContext, chunk = SCAN_CHUNK): Promise<number> {
  if (!ctx.config.sandboxTracking) return 0;
  const now = Date.now();
  const due = await store.unscanned(ctx.db, isoNow(now - ctx.config.sandboxStepSeconds * 1000), SCANS_PER_RUN + Math.min(failedScans.size, MAX_PARKED));
  let done = 0;
  let failure: unknown;
  for (const { id } of due) {
    const failed = failedScans.get(id);
    if (failed && now < failed.retryAt) continue;
    try {
      if (await scanManifest(ctx, id, chunk)) done++;
      failedScans.delete(id);
    } catch (err) {
      // One manifest that cannot be scanned does not hold up the others; the job reports it after them,
      // and this process tries it again later and later (5 s, 10 s, … up to an hour), not on every run.
      const failures = (failed?.failures ?? 0) + 1;
      failedScans.set(id, { failures, retryAt: now + Math.min(SCAN_RETRY_MS * 2 ** (failures - 1), MAX_SCAN_RETRY_MS) });
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
  return done;
}

async function scanManifest(ctx: AppContext, id: string, chunk: number): Promise<boolean> {
  return ctx.db.transaction().execute(async (tx) => {
    const at = isoNow();
    const row = await store.claimScan(tx, id, at);
    if (!row) return false;
    const data = JSON.parse(row.document) as ManifestData;
    const place = [data.shipper.city, data.shipper.state, data.shipper.country].filter(Boolean).join(', ');
    // Every label on the manifest (they stay active), in label-id order: the chunks then take their
    // tracking states in the one order every writer takes them, so a tracking batch cannot deadlock
    // with the scan. Accepted when the parcels were handed over: when the manifest was made.
    const numbers = await trackingNumbersOnManifest(tx, id);
    const events = numbers.map((trackingNumber) => ({ trackingNumber, status: 'in_transit' as const, timestamp: data.createdAt, location: place, description: ACCEPTED }));
    for (let i = 0; i < events.length; i += chunk) await acceptParcels(tx, row.account_id, events.slice(i, i + chunk));
    return true;
  });
}
