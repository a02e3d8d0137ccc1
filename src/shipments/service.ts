import type { AppContext } from '../context.ts';
import type { Db, Tx } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { recordDomainEvent } from '../db/events.ts';
import { Conflict, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import { addressProblems } from '../addresses/service.ts';
import { printProblemsIn } from '../render/text.ts';
import { RETURN_SERVICE, SERVICES, findService, homeNetwork, isReturnService, packageLimit, type Carrier, type CarrierService } from '../carriers/services.ts';
import type { Page } from '../db/page.ts';
import * as store from './store.ts';
import type { Address, Parcel } from '../carriers/types.ts';
import { addressSchema } from '../http/schemas.ts';
import { customsSchema, parcelSchema } from './schemas.ts';
export { shipmentStatuses } from './schemas.ts';
import { crossesCustomsBorder, currencyDigits, customsPlaceName, customsTerritoryOf, EEI_THRESHOLD_USD, grams, WEIGHT_SLACK, inMinorUnits, inUspsNetwork, isCurrencyCode, isMilitaryPost, isUsExport, linesNeedingEei, localPlaceOf, type Customs } from '../carriers/customs.ts';
import { isCountryCode } from '../countries.ts';

export type { Address, Parcel };

export interface NewShipment {
  carrier: Carrier;
  service: string;
  from: Address;
  to: Address;
  parcel: Parcel;
  reference?: string;
  messages?: string[];
  customs?: Customs;
}

export interface Shipment extends NewShipment {
  id: string;
  returnOf?: string;
  status: string;
  label?: { id: string; trackingNumber: string; carrier: string };
  createdAt: string;
  updatedAt: string;
}

export function toShipment(row: store.ShipmentRow): Shipment {
  const s: Shipment = {
    id: row.id,
    carrier: row.carrier as Carrier,
    service: row.service,
    from: JSON.parse(row.from_address),
    to: JSON.parse(row.to_address),
    parcel: JSON.parse(row.parcel),
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.reference !== null) s.reference = row.reference;
  if (row.messages !== null) s.messages = JSON.parse(row.messages) as string[];
  if (row.customs !== null) s.customs = JSON.parse(row.customs) as Customs;
  if (row.return_of !== null) s.returnOf = row.return_of;
  if (row.label_id && row.tracking_number) s.label = { id: row.label_id, trackingNumber: row.tracking_number, carrier: row.carrier };
  return s;
}

interface ObjectSchema {
  required?: readonly string[];
  properties?: Record<string, unknown>;
}

/**
 * `value` with its keys in the order the response serializer (fast-json-stringify) writes them: the
 * schema's required properties first, then the others, nested objects too. The stored address and
 * parcel JSON then reads exactly as the POST answer did, whatever order the client sent the keys in.
 */
function inSchemaOrder(value: unknown, schema: ObjectSchema): unknown {
  if (!schema.properties || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const required = schema.required ?? [];
  const keys = [...required, ...Object.keys(schema.properties).filter((k) => !required.includes(k))];
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (key in source) out[key] = inSchemaOrder(source[key], schema.properties[key] as ObjectSchema);
  }
  return out;
}

/**
 * Every check of a new shipment that needs no database: 400 naming the field (under `prefix`). A
 * return service carries returns only, which `createReturn` makes (`kind` `return`).
 */
export function checkShipment(input: NewShipment, prefix = '', kind: 'outbound' | 'return' = 'outbound'): void {
  const unknown = unknownService(input, prefix, kind);
  if (unknown) throw unknown;
  if (kind === 'outbound' && isReturnService(input.carrier, input.service)) {
    const message = `${input.service} is ${input.carrier}'s return service, which carries returns only: make a return from its shipment (POST /v1/shipments/{id}/returns, or Create a return shipment on the shipment's page)`;
    throw new InvalidInput(`${prefix}service ${message}`, [{ field: `${prefix}service`, message }]);
  }
  // Every problem at once, each naming its field; the customs rules follow from the two countries, so they are checked once those are known.
  const problems: FieldProblem[] = [...addressProblems(input.from, `${prefix}from`), ...addressProblems(input.to, `${prefix}to`)];
  const p = input.parcel;
  const dims = [p.length, p.width, p.height].filter((d) => d !== undefined).length;
  if (dims !== 0 && (dims !== 3 || !p.dimensionUnit)) problems.push({ field: `${prefix}parcel`, message: 'dimensions need length, width, height and dimensionUnit together' });
  else problems.push(...packageProblems(input, prefix));
  // The route first: without a service that runs it, nothing else about the shipment matters yet.
  if (!problems.some((q) => q.field.endsWith('.country'))) {
    problems.unshift(...routeProblems(input, prefix));
    problems.push(...customsProblems(input, prefix));
  }
  // Every string ends up on the label or the customs documents: one that would print as '?' (a script
  // no bundled face has) or as nothing (only emoji) is refused naming its field (render/text.ts).
  problems.push(...printProblemsIn(input, prefix.replace(/\.$/, '')));
  if (problems.length) throw new InvalidInput(`${problems[0]!.field}: ${problems[0]!.message}`, problems);
}

/**
 * What the carrier, the service and the addresses decide, for a form whose other fields still have
 * problems, so that it shows them in the same round: a service the carrier does not offer or that does
 * not run the route, the addresses' own checks (contract §16), a declaration missing across a customs
 * border, and the declaration's own rules once its fields are valid (`valid.customs`; its weight
 * against the parcel's once that is valid too). For a body whose carrier, service and addresses'
 * required fields the schema takes.
 */
export function checksOfWholeParts(input: NewShipment, valid: { customs: boolean; parcel: boolean }, prefix = ''): FieldProblem[] {
  const addresses = [...addressProblems(input.from, `${prefix}from`), ...addressProblems(input.to, `${prefix}to`)];
  const unknown = unknownService(input, prefix);
  if (unknown) return [...(unknown.details ?? []), ...addresses];
  if (addresses.some((q) => q.field.endsWith('.country'))) return addresses;
  const customs = !input.customs || valid.customs ? customsProblems(input, prefix, valid.parcel) : [];
  return [...routeProblems(input, prefix), ...addresses, ...customs];
}

/**
 * 400 naming `service` when the carrier does not offer it, with the carrier's services that can carry
 * it (a shipment: all but the return services; a return: all): those that run the route, when both
 * countries are known.
 */
function unknownService(input: NewShipment, prefix: string, kind: 'outbound' | 'return' = 'outbound'): InvalidInput | undefined {
  if (findService(input.carrier, input.service)) return undefined;
  const ofKind = SERVICES[input.carrier].filter((s) => kind === 'return' || !isReturnService(input.carrier, s.code));
  const known = ofKind.map((s) => s.code).join(', ');
  // With both countries known, the carrier's services that run the route.
  const route = isCountryCode(input.from.country) && isCountryCode(input.to.country);
  const fitting = route ? ofKind.filter((s) => runs(s, input)).map((s) => s.code) : [];
  const where = `from ${customsPlaceName(input.from)} to ${customsPlaceName(input.to)}`;
  const hint = !route ? '' : fitting.length ? `; ${where}: ${fitting.join(', ')}` : `; none runs ${where}: choose another carrier`;
  const message = `must be one of ${known}${hint}`;
  return new InvalidInput(`${prefix}service ${input.service} is not offered by ${input.carrier}: ${message}`, [{ field: `${prefix}service`, message }]);
}

/**
 * Why the shipment's service does not run its route, if it does not: a shipment taken before
 * services were checked against their routes (UPS ground from Berlin to New York). Its label is refused.
 */
export function routeRefusal(shipment: Shipment): FieldProblem | undefined {
  return routeProblems(shipment, '')[0];
}

/** Who sends a parcel from where to where. */
type Route = Pick<NewShipment, 'carrier' | 'from' | 'to'>;

/** Both addresses in UPS's and FedEx's domestic network: the United States' customs territory (the states, DC and Puerto Rico). */
function inHomeNetwork(r: Route): boolean {
  return customsTerritoryOf(r.from) === 'US' && customsTerritoryOf(r.to) === 'US';
}

/**
 * Whether a service carries a parcel on this route (its `reach`). USPS takes parcels in within its
 * network (the United States and the places its mail serves): its domestic services deliver there,
 * its international ones outside it. For UPS, FedEx and DHL a domestic service runs within the US
 * network, an international one between countries (a place told apart by its postal code counting as
 * one) but, for UPS and FedEx, not within their US network, where their domestic services run (the
 * United States to Puerto Rico).
 */
function runs(s: CarrierService, r: Route): boolean {
  if (r.carrier === 'USPS') return inUspsNetwork(r.from) && inUspsNetwork(r.to) === (s.reach === 'domestic');
  if (s.reach === 'domestic') return inHomeNetwork(r);
  return localPlaceOf(r.from) !== localPlaceOf(r.to) && !(r.carrier !== 'DHL' && inHomeNetwork(r));
}

/** The return service a return on this route gets when none is asked for (§13): the carrier's domestic one where it runs, else its international one. */
function returnServiceFor(r: Route): string {
  const { domestic, international } = RETURN_SERVICE[r.carrier];
  return r.carrier === 'USPS' || runs(findService(r.carrier, domestic)!, r) ? domestic : international;
}

/**
 * Routes a service does not run (`runs`, `uspsRouteProblems`); only USPS delivers to APO, FPO and DPO
 * addresses. A refusal names the carrier's services that do run the route (return services for a
 * return service).
 */
function routeProblems(input: NewShipment, prefix: string): FieldProblem[] {
  if (input.carrier === 'USPS') return uspsRouteProblems(input, prefix);
  const out: FieldProblem[] = [];
  for (const side of ['from', 'to'] as const) {
    if (isMilitaryPost(input[side])) out.push({ field: `${prefix}${side}.state`, message: `${input[side].state?.trim().toUpperCase()} is an APO/FPO/DPO address, which only USPS serves, not ${input.carrier}` });
  }
  const service = findService(input.carrier, input.service);
  if (out.length || !service || runs(service, input)) return out;
  const kind = isReturnService(input.carrier, service.code);
  const others = SERVICES[input.carrier].filter((s) => isReturnService(input.carrier, s.code) === kind && runs(s, input)).map((s) => s.code);
  const instead = others.length ? `; choose ${others.join(', ')}` : `; ${input.carrier} offers no ${kind ? 'return ' : ''}service for that route here: choose another carrier`;
  const [from, to] = [customsPlaceName(input.from), customsPlaceName(input.to)];
  const why =
    service.reach === 'domestic'
      ? `carries parcels ${homeNetwork(input.carrier)}, not from ${from} to ${to}`
      : localPlaceOf(input.from) === localPlaceOf(input.to)
        ? `carries parcels between countries; from and to are both in ${to}`
        : `carries parcels between countries; from ${from} to ${to} is within ${input.carrier}'s United States network`;
  out.push({ field: `${prefix}service`, message: `${input.carrier}'s ${input.service} ${why}${instead}` });
  return out;
}

/**
 * USPS takes parcels in only in its network (the United States and the places its mail serves): its
 * domestic services deliver within it, its international ones to a country outside it.
 */
function uspsRouteProblems(input: NewShipment, prefix: string): FieldProblem[] {
  if (!inUspsNetwork(input.from)) {
    return [{ field: `${prefix}from.country`, message: `USPS takes parcels in only in ${US_MAIL}, not in ${customsPlaceName(input.from)}; choose UPS, FedEx or DHL` }];
  }
  const service = findService('USPS', input.service);
  if (!service || runs(service, input)) return [];
  const home = inUspsNetwork(input.to);
  const kind = isReturnService('USPS', service.code);
  const others = SERVICES.USPS.filter((s) => isReturnService('USPS', s.code) === kind && runs(s, input)).map((s) => s.code);
  const instead = others.length ? `; choose ${others.join(', ')}` : '; USPS offers no return service to other countries: choose another carrier';
  const why = `carries parcels ${home ? `from ${US_MAIL} to other countries` : homeNetwork('USPS')}, not to ${customsPlaceName(input.to)}`;
  return [{ field: `${prefix}service`, message: `USPS's ${service.code} ${why}${instead}` }];
}

/** Where USPS takes parcels in, in words. */
const US_MAIL = 'the United States and the places its mail serves';

const CM = { cm: 1, in: 2.54 } as const;
/** A measure as people read it: at most two decimals, no trailing zeros. */
const measure = (value: number, unit: string) => `${Number(value.toFixed(2))} ${unit}`;

/**
 * A carrier's limit in the unit a measure was sent in (`max` of it), and as the message says it: in
 * the carrier's unit, and in the one sent when they differ (rounded down, so a package of exactly
 * that is taken).
 */
function limitIn(limit: { value: number; unit: string }, sent: string, perUnit: (unit: string) => number): { max: number; text: string } {
  const max = (limit.value * perUnit(limit.unit)) / perUnit(sent);
  return { max, text: limit.unit === sent ? measure(limit.value, limit.unit) : `${measure(limit.value, limit.unit)} (${measure(Math.floor(max * 100) / 100, sent)})` };
}

/** A package heavier or larger than its carrier takes (carriers/services.ts), each problem naming its field in the unit it was sent in. */
function packageProblems(input: NewShipment, prefix: string): FieldProblem[] {
  const limit = packageLimit(input.carrier, input.service);
  const p = input.parcel;
  const out: FieldProblem[] = [];
  const service = `${input.carrier} ${input.service}`;
  const over = (value: number, max: number) => value > max * (1 + 1e-9);
  const weight = limitIn(limit.weight, p.weight.unit, (unit) => grams({ value: 1, unit: unit as Parcel['weight']['unit'] }));
  if (over(p.weight.value, weight.max)) out.push({ field: `${prefix}parcel.weight`, message: `${measure(p.weight.value, p.weight.unit)} is over what ${service} takes: at most ${weight.text} a package` });
  if (p.dimensionUnit && p.length !== undefined && p.width !== undefined && p.height !== undefined) {
    const unit = p.dimensionUnit;
    const cm = (u: string) => CM[u as keyof typeof CM];
    const [longest, ...others] = [p.length, p.width, p.height].sort((a, b) => b - a) as [number, number, number];
    const length = limit.length && limitIn(limit.length, unit, cm);
    if (length && over(longest, length.max)) out.push({ field: `${prefix}parcel.length`, message: `the longest side, ${measure(longest, unit)}, is over what ${service} takes: at most ${length.text}` });
    const girth = longest + 2 * (others[0] + others[1]);
    const lengthPlusGirth = limit.lengthPlusGirth && limitIn(limit.lengthPlusGirth, unit, cm);
    if (lengthPlusGirth && over(girth, lengthPlusGirth.max)) {
      out.push({ field: `${prefix}parcel`, message: `length and girth (the longest side and twice the other two) come to ${measure(girth, unit)}, over what ${service} takes: at most ${lengthPlusGirth.text}` });
    }
    const sides = longest + others[0] + others[1];
    const sumOfSides = limit.sumOfSides && limitIn(limit.sumOfSides, unit, cm);
    if (sumOfSides && over(sides, sumOfSides.max)) out.push({ field: `${prefix}parcel`, message: `the three sides come to ${measure(sides, unit)} together, over what ${service} takes: at most ${sumOfSides.text}` });
  }
  return out;
}

/** §12: what the schema cannot say about `customs`, each problem naming its field. */
function customsProblems(input: NewShipment, prefix: string, againstParcel = true): FieldProblem[] {
  const c = input.customs;
  if (!c) {
    if (!crossesCustomsBorder(input.from, input.to)) return [];
    const where = `from ${customsPlaceName(input.from)} to ${customsPlaceName(input.to)}`;
    return [{ field: `${prefix}customs`, message: `is required: the parcel crosses a customs border (${where})` }];
  }
  const out: FieldProblem[] = [];
  const at = (field: string) => `${prefix}customs.${field}`;
  if (c.contentsType === 'other' && !c.contentsExplanation) out.push({ field: at('contentsExplanation'), message: 'is required when contentsType is other' });
  const currency = c.items[0]!.value.currency;
  c.items.forEach((item, i) => {
    if (!isCurrencyCode(item.value.currency)) out.push({ field: at(`items[${i}].value.currency`), message: `${item.value.currency} is not an ISO 4217 currency code` });
    else if (item.value.currency !== currency) {
      // Named after the first item's currency only when that one is a currency at all.
      if (isCurrencyCode(currency)) out.push({ field: at(`items[${i}].value.currency`), message: `must be ${currency}, the currency of the first item: a declaration has one currency` });
    } else if (!inMinorUnits(item.value.amount, currency)) {
      const digits = currencyDigits(currency);
      out.push({ field: at(`items[${i}].value.amount`), message: `${item.value.amount} is not an amount of ${currency}, which has ${digits === 0 ? 'no decimals' : `${digits} decimal${digits === 1 ? '' : 's'}`}` });
    }
    if (!isCountryCode(item.originCountry)) out.push({ field: at(`items[${i}].originCountry`), message: `${item.originCountry} is not an assigned ISO 3166-1 country code` });
  });
  const net = c.items.reduce((sum, item) => sum + grams(item.netWeight), 0);
  const gross = againstParcel ? grams(input.parcel.weight) : Number.POSITIVE_INFINITY;
  if (net > gross * (1 + WEIGHT_SLACK)) out.push({ field: at('items'), message: `the items' net weights add up to ${inParcelUnit(net, input.parcel.weight)}, more than the parcel's ${input.parcel.weight.value} ${input.parcel.weight.unit}` });
  out.push(...eeiProblems(input, c, at('eelPfc')));
  return out;
}

/**
 * A US export's Electronic Export Information (15 CFR 30): above 2,500 USD of one HS code (but to
 * Canada, 30.36) it is filed in AES and its ITN given; on anything but a US export it is refused.
 */
function eeiProblems(input: NewShipment, c: Customs, field: string): FieldProblem[] {
  if (!isUsExport(input.from, input.to)) {
    return c.eelPfc ? [{ field, message: `is for goods leaving the United States (15 CFR 30); from ${customsPlaceName(input.from)} to ${customsPlaceName(input.to)} takes none` }] : [];
  }
  const toCanada = customsTerritoryOf(input.to) === 'CA';
  if (c.eelPfc?.startsWith('NOEEI 30.36') && !toCanada) return [{ field, message: `${c.eelPfc} exempts exports to Canada only; from ${customsPlaceName(input.from)} to ${customsPlaceName(input.to)} cite NOEEI 30.37(a), or the filing's ITN` }];
  if (toCanada || c.eelPfc?.startsWith('AES ')) return [];
  const over = linesNeedingEei(c);
  if (over.length === 0) return [];
  const worth = over.map((l) => `the items of HS code ${l.hsCode} are worth ${l.amount} USD`).join(', ');
  const given = c.eelPfc ? `${c.eelPfc} does not cover it: ` : 'is required: ';
  return [{ field, message: `${given}${worth}, more than the ${EEI_THRESHOLD_USD} USD of one Schedule B number above which Electronic Export Information is filed in AES (15 CFR 30.37(a)); give the filing's ITN, like AES X20261129123456` }];
}

/**
 * A weight in grams written in the parcel's unit, to a millionth of it (exact for lines in grams
 * against kilograms, `5.499 kg`; `2.204623 lb` for a kilogram), so that it reads as the lines add up.
 */
function inParcelUnit(g: number, parcel: NewShipment['parcel']['weight']): string {
  return `${Number((g / grams({ value: 1, unit: parcel.unit })).toFixed(6))} ${parcel.unit}`;
}

export async function createShipment(ctx: AppContext, accountId: string, input: NewShipment): Promise<Shipment> {
  checkShipment(input);
  return ctx.db.transaction().execute((tx) => insertShipment(tx, accountId, input));
}

/** Writes a checked new shipment and its `shipment.created` event inside the caller's transaction. */
export async function insertShipment(tx: Tx, accountId: string, input: NewShipment, returnOf?: string): Promise<Shipment> {
  const now = isoNow();
  const row: store.ShipmentRow = {
    id: uuidv7(),
    account_id: accountId,
    carrier: input.carrier,
    service: input.service,
    from_address: JSON.stringify(inSchemaOrder(input.from, addressSchema)),
    to_address: JSON.stringify(inSchemaOrder(input.to, addressSchema)),
    parcel: JSON.stringify(inSchemaOrder(input.parcel, parcelSchema)),
    reference: input.reference ?? null,
    messages: input.messages?.length ? JSON.stringify(input.messages) : null,
    customs: input.customs ? JSON.stringify(inSchemaOrder(input.customs, customsSchema)) : null,
    return_of: returnOf ?? null,
    status: 'created',
    label_id: null,
    tracking_number: null,
    created_at: now,
    updated_at: now,
  };
  const shipment = toShipment(row);
  await store.insertShipment(tx, row);
  await recordDomainEvent(tx, { accountId, type: 'shipment.created', subjectId: row.id, data: shipment, at: now });
  return shipment;
}

export interface NewReturn {
  service?: string;
  reference?: string;
  customs?: Customs;
}

/**
 * Why a shipment cannot have a return (409), if it cannot: it is a return itself, or USPS carried it
 * abroad, where USPS takes no parcels in (and a return keeps its carrier, §13).
 */
export function returnRefusal(original: Shipment): string | undefined {
  if (original.returnOf) return `shipment ${original.id} is itself a return (of ${original.returnOf}); it cannot be returned again`;
  if (original.carrier === 'USPS' && !inUspsNetwork(original.to)) {
    return `shipment ${original.id} went by USPS to ${customsPlaceName(original.to)}, where USPS takes no parcels in, and a return keeps its carrier: send it back as a new shipment with UPS, FedEx or DHL`;
  }
  return undefined;
}

/**
 * `POST /v1/shipments/{id}/returns` (§13): the original's addresses swapped, its carrier and parcel,
 * the carrier's return service unless another is given, and across a customs border the original's
 * customs as `returned_goods` unless other customs are given. 409 when it can have none (`returnRefusal`).
 */
export async function createReturn(ctx: AppContext, accountId: string, id: string, input: NewReturn): Promise<Shipment> {
  const original = await getShipment(ctx.db, accountId, id);
  const refusal = returnRefusal(original);
  if (refusal) throw new Conflict(refusal);
  const crosses = crossesCustomsBorder(original.to, original.from);
  const customs = input.customs ?? (crosses && original.customs ? returnCustoms(original.customs, original.to.name) : undefined);
  const ret: NewShipment = {
    carrier: original.carrier,
    service: input.service ?? returnServiceFor({ carrier: original.carrier, from: original.to, to: original.from }),
    from: original.to,
    to: original.from,
    parcel: original.parcel,
    ...(input.reference !== undefined ? { reference: input.reference } : original.reference !== undefined ? { reference: original.reference } : {}),
    ...(customs ? { customs } : {}),
  };
  checkShipment(ret, '', 'return');
  return ctx.db.transaction().execute((tx) => insertShipment(tx, accountId, ret, original.id));
}

/**
 * The original's declaration as its return's (§13): the same items as returned goods. The parties'
 * numbers follow the parties: the original sender now imports, so its EORI becomes the importer's
 * number, and the customer's VAT number, no exporter's EORI, goes; the original's invoice number,
 * incoterm and non-delivery choice were its sale's, so the return takes the defaults (its tracking
 * number as the invoice number, DAP, return to sender), and so was its IOSS number. The original's
 * EEI citation was its own export's: a return from the US is an export of its own, which over 2,500
 * USD of one HS code needs its own filing (given with the return's `customs`). The declaration is
 * signed by who sends the goods back: the customer (`sender`), no longer the seller.
 */
function returnCustoms(original: Customs, sender: string): Customs {
  const { eori, importerVat: _customer, incoterm: _incoterm, nonDelivery: _nonDelivery, invoiceNumber: _invoice, ioss: _sale, eelPfc: _export, signer: _seller, ...goods } = original;
  return { ...goods, contentsType: 'returned_goods', ...(eori ? { importerVat: eori } : {}), signer: sender };
}

/** The shipment of this account, or NOT_FOUND (also for another account's id). */
export async function getShipment(db: Db | Tx, accountId: string, id: string): Promise<Shipment> {
  const row = await store.findShipment(db, accountId, id);
  if (!row) throw notFound(id);
  return toShipment(row);
}

/** The return shipments made of this account's shipment, oldest first (the dashboard lists them on its page). */
export async function returnsOf(db: Db | Tx, accountId: string, id: string, limit = 50): Promise<Shipment[]> {
  return (await store.findReturnsOf(db, accountId, id, limit)).map(toShipment);
}

/** NOT_FOUND naming the id: also what another account's shipment answers. */
function notFound(id: string): NotFound {
  return new NotFound('shipment', id);
}

export type ShipmentFilter = store.ShipmentFilter;

/**
 * The `recipient-search` job (src/worker.ts): fills the recipient search of shipments made before it
 * existed, or by a process running older code, a page at a time; answers how many it filled.
 */
export async function fillRecipientSearch(ctx: AppContext, pageSize = 500): Promise<number> {
  return store.fillRecipientSearch(ctx.db, pageSize);
}

/** Newest first, narrowed by status, carrier, or a search (a tracking number, a reference, a recipient: `ShipmentFilter`). */
export async function listShipments(ctx: AppContext, accountId: string, page: Page, filter: ShipmentFilter = {}): Promise<Shipment[]> {
  return (await store.listShipments(ctx.db, accountId, page, filter)).map(toShipment);
}

// ---- what the other capabilities do to a shipment, inside their own transactions ----

/** This account's shipments among these ids, in no particular order (another account's id finds nothing). */
export async function accountShipmentsByIds(db: Db | Tx, accountId: string, ids: string[]): Promise<Shipment[]> {
  return ids.length ? (await store.findAccountShipmentsByIds(db, accountId, [...new Set(ids)])).map(toShipment) : [];
}

/** Any accounts' shipments by id, in no particular order (ids come from the caller's own rows). */
export async function shipmentsByIds(tx: Db | Tx, ids: string[]): Promise<Shipment[]> {
  if (ids.length === 0) return [];
  return (await store.findShipmentsByIds(tx, [...new Set(ids)])).map(toShipment);
}

/**
 * The sender of the account's newest shipment that is not a return (whose sender is the customer),
 * with that shipment's reference or id: a warehouse sends from the same place day after day.
 */
export async function lastSender(db: Db, accountId: string): Promise<{ from: Address; shipment: string } | undefined> {
  const row = await store.findLastOutbound(db, accountId);
  return row ? { from: JSON.parse(row.from_address) as Address, shipment: row.reference ?? row.id } : undefined;
}

/** Records the shipment's active label. */
export async function attachLabel(tx: Tx, shipmentId: string, label: { id: string; trackingNumber: string }, at: string): Promise<void> {
  await store.setShipmentLabel(tx, shipmentId, label, at);
}

/** The statuses of a shipment whose parcel the carrier has not scanned yet: its label can still be invalidated. */
const UNSCANNED: readonly string[] = ['created', 'pre_transit'];

/** Whether the shipment's status says the carrier has scanned its parcel (its label's postage is used). */
export function carrierHasParcel(status: string): boolean {
  return !UNSCANNED.includes(status);
}

/**
 * Clears the shipment's active label when that label is invalidated, in the caller's transaction.
 * Once the carrier has scanned the parcel (the shipment's status is past `pre_transit`), the postage
 * is used: nothing changes and the status that refused it is returned, else null.
 */
export async function detachLabel(tx: Tx, shipmentId: string, at: string): Promise<string | null> {
  if (await store.clearShipmentLabel(tx, shipmentId, UNSCANNED, at)) return null;
  return (await store.findShipmentsByIds(tx, [shipmentId]))[0]?.status ?? 'unknown';
}

/**
 * Records the status each shipment's active label reached, in one statement; returns those shipments
 * as they now are. A shipment whose active label is no longer `labelId` (invalidated, or replaced,
 * since the caller read the label) is left as it is and not returned.
 */
export async function recordShipmentStatuses(tx: Tx, changes: { shipmentId: string; labelId: string; status: string }[], at: string): Promise<Shipment[]> {
  if (changes.length === 0) return [];
  return (await store.setShipmentStatuses(tx, changes.map((c) => ({ id: c.shipmentId, labelId: c.labelId, status: c.status })), at)).map(toShipment);
}

/** The body of `POST /v1/shipments`, for capabilities that take a shipment inside their own (batches, the dashboard's forms). */
export { createShipmentBody } from './schemas.ts';
/** The schemas `createShipmentBody` refers to, for a validator of its own. */
export const shipmentBodySchemas = [addressSchema, parcelSchema, customsSchema];
