import type { AppContext } from '../context.ts';
import { createCache, type Cache } from '../cache.ts';
import type { Db } from '../db/index.ts';
import { isUniqueViolation } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { Conflict, Forbidden, Gone, NotFound } from '../errors.ts';
import { linkDeadline, signedLink, verifiedLinkExpiry } from '../http/signed-links.ts';
import type { Download } from '../http/downloads.ts';
import type { DocumentSource } from '../render/index.ts';
import { getShipment } from '../shipments/service.ts';
import type { KeyRing } from '../auth/keyring.ts';
import { indiciumSigner, readIndicium, signIndicium, verifyIndicium, type IndiciumSigner } from './indicium.ts';
import * as store from './store.ts';

export const STAMP_FORMATS = ['PDF', 'PNG', 'ZPL'] as const;
export type StampFormat = (typeof STAMP_FORMATS)[number];
export const STAMP_STATUSES = ['active', 'invalidated', 'expired'] as const;
export type StampStatus = (typeof STAMP_STATUSES)[number];

const DOWNLOAD_VALIDITY_MS = 24 * 3600 * 1000;

export interface NewStamp {
  shipmentId: string;
  format?: StampFormat;
}

export interface Stamp {
  id: string;
  shipmentId: string;
  carrier: string;
  format: StampFormat;
  url: string;
  createdAt: string;
  expiresAt: string;
  status: StampStatus;
  serial: string;
  indicium: string;
}

export interface Verification {
  genuine: boolean;
  status: StampStatus | null;
  stampId: string | null;
}

/** `ST-0007-000123`: the account's issuer code, then its own running number. */
export function formatSerial(issuerCode: number, number: number): string {
  return `ST-${String(issuerCode).padStart(4, '0')}-${String(number).padStart(6, '0')}`;
}

/** The stored state, with `expired` once the 24 hours are over. */
export function statusOf(row: Pick<store.StampRow, 'status' | 'expires_at'>, now = Date.now()): StampStatus {
  if (row.status === 'invalidated') return 'invalidated';
  return now >= Date.parse(row.expires_at) ? 'expired' : 'active';
}

function toStamp(ctx: AppContext, row: store.StampRow, format = row.format as StampFormat): Stamp {
  return {
    id: row.id,
    shipmentId: row.shipment_id,
    carrier: row.carrier,
    format,
    url: signedLink(ctx.urlKey, ctx.config.baseUrl, 'stamps', row.id, format, row.expires_at),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    status: statusOf(row),
    serial: row.serial,
    indicium: row.indicium,
  };
}

// Issuer codes never change once assigned, so each process remembers them.
const issuerCodes = new WeakMap<Db, Cache<string, number>>();
async function issuerCodeOf(db: Db, accountId: string): Promise<number> {
  let codes = issuerCodes.get(db);
  if (!codes) {
    codes = createCache({ max: 100_000 });
    issuerCodes.set(db, codes);
  }
  let code = codes.get(accountId);
  if (code === undefined) {
    code = await store.issuerCode(db, accountId);
    codes.set(accountId, code);
  }
  return code;
}

// Keys never change once created, so each process keeps the ones it has signed with.
const signers = createCache<string, IndiciumSigner>({ max: 100 });

/** The current stamp key, ready for synchronous signing. */
export async function currentSigner(keys: KeyRing): Promise<IndiciumSigner> {
  const { kid } = await keys.signingKey('stamp');
  let signer = signers.get(kid);
  if (!signer) {
    const jwk = await keys.privateJwk(kid, 'stamp');
    if (!jwk) throw new Error(`stamp key ${kid} is not in the database`);
    signer = indiciumSigner(kid, jwk as Parameters<typeof indiciumSigner>[1]);
    signers.set(kid, signer);
  }
  return signer;
}

function alreadyStamped(shipmentId: string, stampId: string): Conflict {
  return new Conflict(`shipment ${shipmentId} already has stamp ${stampId}; invalidate it before creating another`);
}

export async function createStamp(ctx: AppContext, accountId: string, input: NewStamp): Promise<Stamp> {
  const format = input.format ?? 'PDF';
  const shipment = await getShipment(ctx.db, accountId, input.shipmentId);
  const existing = await store.findActiveStampOfShipment(ctx.db, shipment.id);
  if (existing) throw alreadyStamped(shipment.id, existing.id);
  const code = await issuerCodeOf(ctx.db, accountId);
  const signer = await currentSigner(ctx.keys);
  try {
    const row = await ctx.db.transaction().execute(async (tx) => {
      // The counter comes first: it takes the write lock, so serials follow commit order, and the
      // time read after it never goes backwards from one serial to the next.
      const serial = formatSerial(code, await store.nextSerialNumber(tx, accountId));
      const now = Date.now();
      const id = uuidv7(now);
      const indicium = signIndicium(signer, {
        jti: id,
        sn: serial,
        sub: shipment.id,
        car: shipment.carrier,
        // Where a country has no postal codes, the country code stands in for one.
        org: shipment.from.postalCode ?? shipment.from.country,
        dst: shipment.to.postalCode ?? shipment.to.country,
        iat: Math.floor(now / 1000),
      });
      const row: store.StampRow = {
        id,
        account_id: accountId,
        shipment_id: shipment.id,
        carrier: shipment.carrier,
        serial,
        format,
        status: 'active',
        indicium,
        created_at: isoNow(now),
        expires_at: isoNow(now + DOWNLOAD_VALIDITY_MS),
        invalidated_at: null,
      };
      await store.insertStamp(tx, row);
      return row;
    });
    return toStamp(ctx, row);
  } catch (err) {
    if (isUniqueViolation(err)) {
      const winner = await store.findActiveStampOfShipment(ctx.db, shipment.id);
      if (winner) throw alreadyStamped(shipment.id, winner.id);
    }
    throw err;
  }
}

/** The stamp, with `format` and `url` for the format asked for (by default the one it was created in). */
export async function getStamp(ctx: AppContext, accountId: string, id: string, format?: StampFormat): Promise<Stamp> {
  const row = await store.findStamp(ctx.db, accountId, id.toLowerCase());
  if (!row) throw new NotFound('stamp', id);
  return toStamp(ctx, row, format);
}

/** Invalidates all the stamps or none: any id unknown to the account is 404 and changes nothing. */
export async function invalidateStamps(ctx: AppContext, accountId: string, ids: string[]): Promise<void> {
  const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
  await ctx.db.transaction().execute(async (tx) => {
    const found = await store.invalidateStamps(tx, ctx.storage.dialect, accountId, wanted, isoNow());
    const missing = wanted.find((id) => !found.has(id));
    if (missing) throw new NotFound('stamp', missing);
  });
}

const NOT_GENUINE: Verification = { genuine: false, status: null, stampId: null };

/** Genuine when one of our stamp keys signed it and the stamp it names exists; says nothing else. */
export async function verifyStamp(ctx: AppContext, indicium: string): Promise<Verification> {
  const claims = await verifyIndicium(ctx.keys, indicium);
  if (!claims) return NOT_GENUINE;
  const row = await store.findStampState(ctx.db, claims.jti);
  if (!row || row.serial !== claims.sn || row.shipment_id !== claims.sub) return NOT_GENUINE;
  return { genuine: true, status: statusOf(row), stampId: row.id };
}

export interface DownloadRequest {
  id: string;
  format: string;
  /** As signed: Unix seconds in plain digits (any other spelling is a changed link, 403). */
  expires: string;
  sig: string;
  dpi?: 203 | 300;
}

export async function openStampDownload(ctx: AppContext, req: DownloadRequest): Promise<Download> {
  const expires = verifiedLinkExpiry(ctx.urlKey, 'stamps', req);
  if (!(STAMP_FORMATS as readonly string[]).includes(req.format)) throw new Forbidden('the download link is not valid: it was changed or not issued by this service');
  const now = Date.now();
  const row = await store.findStampById(ctx.db, req.id);
  if (!row) throw new NotFound('stamp', req.id);
  if (row.status !== 'active') throw new Gone(`stamp ${row.id} was invalidated and can no longer be downloaded`);
  const until = linkDeadline(expires, row.expires_at);
  if (now >= until) throw new Gone(`the download link of stamp ${row.id} expired at ${new Date(until).toISOString()}`);
  const claims = readIndicium(row.indicium);
  const source: DocumentSource = { layout: 'stamp', data: { serial: row.serial, carrier: row.carrier, originPostalCode: claims.org, issuedAt: row.created_at, indicium: row.indicium } };
  const format = req.format as StampFormat;
  const dpi = req.dpi ?? 203;
  return {
    ...ctx.renderer.prepare(source, format, dpi),
    // An invalidated stamp must not be served from any cache.
    cacheControl: 'no-store',
    filename: `stamp-${row.serial}`,
  };
}
