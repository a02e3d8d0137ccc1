// Shipments in the dashboard: the list (search and filters), a new shipment with its label (the API's
// messages beside the fields), and a shipment's page (addresses, parcel, customs, the label's preview,
// downloads, print file, invalidate, return, tracking timeline). Handlers only call the services.
import type { FastifyInstance } from 'fastify';
import { CARRIERS, SERVICES, findService, isReturnService, type Carrier } from '../carriers/services.ts';
import { CONTENTS_TYPES } from '../carriers/customs.ts';
import type { Address } from '../carriers/types.ts';
import { AppError, Conflict, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import { pageOf } from '../http/pagination.ts';
import { idParams } from '../http/schemas.ts';
import { onceForForm, type FormSending } from '../http/idempotency.ts';
import { createPrintFile } from '../batches/service.ts';
import { createLabel, getLabel, invalidateLabel, manifestOfLabel, type Label } from '../labels/service.ts';
import { getManifest } from '../manifests/service.ts';
import { LABEL_FORMATS, type LabelFormat, type LabelSize } from '../render/index.ts';
import { LABEL_SIZES } from '../render/label.ts';
import { crossesPostalBorder, postalLines } from '../render/layouts/address.ts';
import { PRINT_LAYOUTS, type PrintLayout } from '../render/layouts/sheet.ts';
import { carrierHasParcel, createReturn, createShipment, returnRefusal, lastSender, checksOfWholeParts, getShipment, listShipments, returnsOf, shipmentStatuses, type NewShipment, type Shipment } from '../shipments/service.ts';
import { trackingInfo, type TrackingEvent } from '../tracking/service.ts';
import { actionButton, confirmation, csrfField, day, errorSummary, field, fieldErrors, formKeyField, formKeyOf, group, html, Html, table, time, type FieldOptions, statusBadge, olderLink, words } from './html.ts';
import { PAGE, sentAgain, type Dashboard, type FormFields } from './routes.ts';
import { commaHint, setField, shipmentBodyProblems } from './validation.ts';

// Values as the API spells them, shown as words (`in transit` for in_transit).
const options = (values: readonly string[], none?: string) => [...(none !== undefined ? [['', none] as const] : []), ...values.map((v) => [v, words(v)] as const)];
const WEIGHT_UNITS = ['kg', 'g', 'lb', 'oz'] as const;
/** The fields what the route decides rests on: the carrier, the service, and the addresses' parts a check reads. */
const ROUTE_PARTS = /^(body|carrier|service|from|to)$|^(from|to)\.(name|street1|city|state|postalCode|country)$/;
/** Lines of contents the form offers: a parcel of a few kinds of goods (the CSV upload takes more). */
const CUSTOMS_LINES = 3;
/** Form fields that hold numbers (the rest are text); an integer where the API wants one. */
const NUMBERS = new Set(['parcel.weight.value', 'parcel.length', 'parcel.width', 'parcel.height', ...lines((at) => [`${at}.netWeight.value`, `${at}.value.amount`])]);
const INTEGERS = new Set(lines((at) => [`${at}.quantity`]));

/** `fields` of every line of contents the form offers (`customs.items[0]` …). */
function lines(fields: (at: string) => string[]): string[] {
  return Array.from({ length: CUSTOMS_LINES }, (_, i) => fields(`customs.items[${i}]`)).flat();
}
/** Fields of codes the API takes in capitals: countries and currencies (a state is kept as typed: `Bayern`). */
const CODES = /(?:\.country|\.originCountry|\.currency)$/;

type Form = Record<string, string>;

/**
 * The form's fields as the API's body (`to.postalCode` → `{to: {postalCode}}`). Only the form's own
 * fields are read (FIELD_NAMES, never the names a request brings), and empty ones are left out.
 */
export function bodyOf(form: Form): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const path of FIELD_NAMES) {
    const text = (form[path] ?? '').trim().replace(/\s+/g, ' ');
    if (text === '' || path.startsWith('label.')) continue;
    const n = Number(text);
    // A number the person mistyped stays text, so the schema names the field ("must be number").
    // Codes are typed in any case (`de`, `usd`); the API takes them in capitals.
    const value = (NUMBERS.has(path) || INTEGERS.has(path)) && Number.isFinite(n) ? n : CODES.test(path) ? text.toUpperCase() : path === 'customs.eelPfc' ? eeiAsTyped(text) : text;
    setField(out, path, value);
  }
  const customs = out.customs as { items?: ({ netWeight?: { value?: unknown; unit?: unknown } } | undefined)[] } | undefined;
  if (customs?.items) {
    // Lines left empty are not sent (`emptyLineProblems` refuses one before a line in use).
    customs.items = customs.items.filter((item) => item !== undefined);
    // An item's net weight is in the parcel's unit unless another is chosen, as in the CSV upload.
    const parcelUnit = (out.parcel as { weight?: { unit?: unknown } } | undefined)?.weight?.unit;
    for (const item of customs.items) {
      const net = item?.netWeight;
      if (net && net.value !== undefined && net.unit === undefined && parcelUnit !== undefined) net.unit = parcelUnit;
    }
  }
  return out;
}

/** A line of contents left empty before one in use: the lines are read in order, so it is named rather than skipped. */
function emptyLineProblems(form: Form): FieldProblem[] {
  const used = Array.from({ length: CUSTOMS_LINES }, (_, i) => FIELD_NAMES.some((name) => name.startsWith(`customs.items[${i}].`) && !name.endsWith('.unit') && (form[name] ?? '').trim() !== ''));
  const last = used.lastIndexOf(true);
  return used.flatMap((inUse, i) => (!inUse && i < last ? [{ field: `customs.items[${i}].description`, message: `is empty while line ${last + 1} is filled in: fill the lines from the first` }] : []));
}

/** An ITN as people type it (`x2026…`, `aes x2026…`) as the API takes it: `AES X2026…`; anything else as typed. */
function eeiAsTyped(text: string): string {
  const itn = /^(?:aes\s*)?(x\d{14})$/i.exec(text);
  return itn ? `AES ${itn[1]!.toUpperCase()}` : text;
}

/**
 * Numbers as people type them: a text field (a number field of some browsers turns `1,5` into 15
 * without a word), and a decimal comma refused with the way to write it, as the CSV upload does.
 */
function numberProblems(form: Form): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const path of [...NUMBERS, ...INTEGERS]) {
    const text = (form[path] ?? '').trim();
    if (text === '' || Number.isFinite(Number(text))) continue;
    out.push({ field: path, message: `${text} is not a number${commaHint(text)}` });
  }
  return out;
}

/** The new-shipment form as posted: its own fields only. */
function readForm(form: FormFields): Form {
  return Object.fromEntries(FIELD_NAMES.map((name) => [name, form.one(name)]));
}

// ---- the list ----

interface ListQuery {
  q?: string;
  status?: string;
  carrier?: string;
  cursor?: string;
}

/** The most characters a search of the shipment list may have. */
const SEARCH_MAX = 100;

function listPage(d: Dashboard, shipments: Shipment[], query: ListQuery, older: Html, problems?: FieldProblem[]): (token: string) => Html {
  const errors = problems ? fieldErrors(problems) : undefined;
  return () => html`<h1>Shipments</h1>
${errorSummary(problems, undefined, new Map([['q', 'Tracking number, reference or customer']]))}
<form method="get" action="${d.base}/shipments" role="search" class="filters" aria-label="Find shipments">
${field({ label: 'Tracking number, reference or customer', name: 'q', type: 'search', value: query.q ?? '', maxLength: SEARCH_MAX, ...(errors ? { errors } : {}) })}
${field({ label: 'Status', name: 'status', value: query.status ?? '', options: options(shipmentStatuses, 'Any status') })}
${field({ label: 'Carrier', name: 'carrier', value: query.carrier ?? '', options: options(CARRIERS, 'Any carrier') })}
<button type="submit">Search</button>
</form>
<p><a href="${d.base}/shipments/new">Create a shipment</a></p>
${errors ? '' : table(
  query.q || query.status || query.carrier ? 'Shipments found' : 'Newest shipments first',
  ['Shipment', 'Customer', 'Carrier', 'Status', 'Tracking number', 'Created'],
  shipments.map((s) => [
    html`<a href="${d.base}/shipments/${s.id}">${s.reference ?? s.id}</a>${s.returnOf ? ' (return)' : ''}`,
    // The customer: the recipient, or for a return the sender.
    s.returnOf ? html`from ${s.from.name}, ${s.from.city}, ${s.from.country}` : html`${s.to.name}, ${s.to.city}, ${s.to.country}`,
    html`${s.carrier} ${words(s.service)}`,
    statusBadge(s.status),
    html`${s.label?.trackingNumber ?? '—'}`,
    time(s.createdAt),
  ]),
  query.q || query.status || query.carrier ? 'No shipment matches.' : 'No shipments yet.',
)}
${older}`;
}

// ---- the new-shipment form ----

/** Each field of an address: its key, label, hint, and when it is required if not always (shown instead of "optional"). */
const ADDRESS_FIELDS: [keyof Address, string, string?, string?][] = [
  ['name', 'Name'],
  ['company', 'Company'],
  ['street1', 'Street'],
  ['street2', 'Street, second line'],
  ['city', 'City'],
  ['state', 'State or province', 'The code: NY, ON, NSW …', 'required in the US, Canada and Australia'],
  ['postalCode', 'Postal code', 'Left out only where the post has none, such as Hong Kong (optional in Ireland).', 'required in most countries'],
  ['country', 'Country', 'Two letters: US, DE, GB …'],
  ['phone', 'Phone'],
  ['email', 'Email'],
];
const REQUIRED_ADDRESS = new Set(['name', 'street1', 'city', 'country']);
const AUTOCOMPLETE: Record<keyof Address, string> = { name: 'name', company: 'organization', street1: 'address-line1', street2: 'address-line2', city: 'address-level2', state: 'address-level1', postalCode: 'postal-code', country: 'country', phone: 'tel', email: 'email' };

/** A field of the form: its name is the API's field path. */
type FieldSpec = Omit<FieldOptions, 'value' | 'errors'> & { initial?: string };

function addressFields(side: 'from' | 'to'): FieldSpec[] {
  return ADDRESS_FIELDS.map(([key, label, hint, requiredWhen]) => ({
    label,
    name: `${side}.${key}`,
    required: REQUIRED_ADDRESS.has(key),
    ...(requiredWhen ? { requiredWhen } : {}),
    type: key === 'email' ? 'email' : 'text',
    autocomplete: `section-${side} ${AUTOCOMPLETE[key]}`,
    ...(hint ? { hint } : {}),
  }));
}

/**
 * The services a new shipment may take (return services carry returns only, made on a shipment's
 * page), each named with its carriers and where it runs: `worldwide saver (UPS, between countries)`.
 */
const SERVICE_OPTIONS: readonly (readonly [string, string])[] = [
  ['', 'Choose a service'],
  ...[...new Set(CARRIERS.flatMap((c) => SERVICES[c].filter((s) => !isReturnService(c, s.code)).map((s) => s.code)))].map((code) => {
    const carriers = CARRIERS.filter((c) => findService(c, code));
    const usps = carriers[0] === 'USPS';
    const where = findService(carriers[0]!, code)!.reach === 'domestic' ? (usps ? 'in the US and the places its mail serves' : 'within the US and Puerto Rico') : usps ? 'from the US to other countries' : 'between countries';
    return [code, `${words(code)} (${carriers.join(', ')}, ${where})`] as const;
  }),
];

/** What a declaration's own fields say beside their label: the browser cannot require them, as a domestic parcel has none. */
const DECLARED = 'required with a declaration';

/** The fields of one line of contents (`customs.items[i]`), required on the first line, on the others only once it is used. */
function customsLine(i: number): FormGroup {
  const at = `customs.items[${i}]`;
  // The group says once which of its fields are required: beside each one it would be said eight times.
  const quiet = { requiredWhen: '' };
  return {
    legend: `Contents line ${i + 1}`,
    name: at,
    hint: `${i === 0 ? 'With a declaration every field is required but the net weight’s unit.' : 'For another kind of goods: once the line is used, every field is required but the unit.'} Quantity, net weight and value are the whole line’s: for 2 mugs of 12.50 each, the value is 25.00.`,
    ...(i === 0 ? {} : { more: true }),
    fields: [
      { name: `${at}.description`, label: 'Item description', ...quiet },
      { name: `${at}.quantity`, label: 'Quantity', ...quiet, inputMode: 'numeric' },
      { name: `${at}.netWeight.value`, label: 'Net weight', ...quiet, inputMode: 'decimal' },
      { name: `${at}.netWeight.unit`, label: 'Net weight unit', options: options(WEIGHT_UNITS, 'as the parcel’s') },
      { name: `${at}.value.amount`, label: 'Value', ...quiet, inputMode: 'decimal' },
      { name: `${at}.value.currency`, label: 'Currency', ...quiet, ...(i === 0 ? { hint: 'Three letters: USD, EUR …' } : {}) },
      { name: `${at}.hsCode`, label: 'HS code', ...quiet, ...(i === 0 ? { hint: '6 to 10 digits.' } : {}) },
      { name: `${at}.originCountry`, label: 'Country of origin', ...quiet, ...(i === 0 ? { hint: 'Two letters.' } : {}) },
    ],
  };
}

/** A part of the form: a fieldset. `more`: one of the parts most shipments do not need, shown folded until used. */
interface FormGroup {
  legend: string;
  name: string;
  hint?: string;
  more?: true;
  fields: FieldSpec[];
}

/** The form, group by group: what it shows, what it reads, and where a problem of the API is shown. */
const GROUPS: FormGroup[] = [
  {
    legend: 'Carrier',
    name: 'body',
    fields: [
      { name: 'carrier', label: 'Carrier', required: true, options: options(CARRIERS, 'Choose a carrier') },
      { name: 'service', label: 'Service', required: true, options: SERVICE_OPTIONS, hint: 'Each service with its carriers and where it runs. A return is made on its shipment\'s page.' },
      { name: 'reference', label: 'Reference', hint: 'Printed on the label, and what you can search for.' },
    ],
  },
  { legend: 'From (sender)', name: 'from', fields: addressFields('from') },
  { legend: 'To (recipient)', name: 'to', fields: addressFields('to') },
  {
    legend: 'Parcel',
    name: 'parcel',
    fields: [
      { name: 'parcel.weight.value', label: 'Weight', required: true, inputMode: 'decimal', hint: 'With a decimal point: 1.5' },
      { name: 'parcel.weight.unit', label: 'Weight unit', required: true, options: options(WEIGHT_UNITS), initial: 'kg' },
      { name: 'parcel.length', label: 'Length', inputMode: 'decimal' },
      { name: 'parcel.width', label: 'Width', inputMode: 'decimal' },
      { name: 'parcel.height', label: 'Height', inputMode: 'decimal' },
      { name: 'parcel.dimensionUnit', label: 'Dimension unit', options: options(['cm', 'in'], 'None') },
    ],
  },
  {
    legend: 'Customs declaration (parcels that cross a customs border)',
    name: 'customs',
    hint: `What is in the parcel, in up to ${CUSTOMS_LINES} lines below; the API takes up to 50.`,
    fields: [
      { name: 'customs.contentsType', label: 'Contents', requiredWhen: 'required across a customs border', options: options(CONTENTS_TYPES, 'No declaration') },
      { name: 'customs.contentsExplanation', label: 'What the contents are', requiredWhen: 'required when the contents are other' },
      { name: 'customs.signer', label: 'Signed by', requiredWhen: DECLARED },
      { name: 'customs.eelPfc', label: 'EEI (goods leaving the US)', requiredWhen: 'required over 2,500 USD of one HS code', hint: 'AES and the filing’s ITN: AES X20261129123456. Left empty, the exemption NOEEI 30.37(a) is printed (30.36 to Canada).' },
    ],
  },
  ...Array.from({ length: CUSTOMS_LINES }, (_, i) => customsLine(i)),
  {
    legend: 'Label',
    name: 'label',
    fields: [
      { name: 'label.format', label: 'Format', required: true, options: options(LABEL_FORMATS), initial: 'PDF' },
      { name: 'label.size', label: 'Size', required: true, options: options(LABEL_SIZES), initial: '4x6' },
    ],
  },
];
const FIELD_NAMES = GROUPS.flatMap((g) => g.fields.map((f) => f.name));
/** Every place a problem is shown, from the top of the form down: each group, then its fields. */
const FORM_ORDER = GROUPS.flatMap((g) => [g.name, ...g.fields.map((f) => f.name)]);
/** The parts shown folded (`FormGroup.more`), together after the others of the customs declaration. */
const MORE = GROUPS.filter((g) => g.more);
/** Labels that more than one group has (the addresses' Name, Street, …). */
const SHARED_LABELS = new Set(GROUPS.flatMap((g) => g.fields.map((f) => f.label)).filter((label, i, all) => all.indexOf(label) !== i));
/** What a person reads for a field or a group in the error summary: a field's label, with its group's where the label alone is ambiguous (`Postal code, To (recipient)`). */
const LABELS = new Map<string, string>(
  GROUPS.flatMap((g) => [[g.name, g.legend] as const, ...g.fields.map((f) => [f.name, SHARED_LABELS.has(f.label) ? `${f.label}, ${g.legend}` : f.label] as const)]),
);

/**
 * A problem of a field the form does not have is shown at the nearest one it has, in words: one of an
 * object the form asks for in parts (`customs.items[0].netWeight`) at its first part (Net weight), any
 * other at its group (`customs.items` at Customs declaration, as `Items: …`).
 */
function shownAt(problem: FieldProblem): FieldProblem {
  if (LABELS.has(problem.field)) return problem;
  const part = FIELD_NAMES.find((name) => name.startsWith(`${problem.field}.`) && !/[.[]/.test(name.slice(problem.field.length + 1)));
  if (part) return { field: part, message: problem.message };
  let field = problem.field;
  while (!LABELS.has(field)) {
    const shorter = field.replace(/(?:\.[^.[\]]*|\[\d+\])$/, '');
    field = shorter === field || shorter === '' ? 'body' : shorter;
  }
  const rest = problem.field.slice(field === 'body' ? 0 : field.length).replace(/^\./, '');
  const words = rest.replace(/\[(\d+)\]/g, (_, i: string) => ` ${Number(i) + 1}`).replace(/\./g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return { field, message: `${words.charAt(0).toUpperCase()}${words.slice(1)}: ${problem.message}` };
}

/** `senderFrom`: the reference (or id) of the shipment whose sender the empty form was filled with. */
function newShipmentPage(d: Dashboard, form: Form, formKey: string, given?: FieldProblem[], message?: string, senderFrom?: string): (token: string) => Html {
  // In the order the form asks: the summary reads from the top of the page down, as the fields do.
  const problems = given?.map(shownAt).sort((a, b) => FORM_ORDER.indexOf(a.field) - FORM_ORDER.indexOf(b.field));
  const errors = fieldErrors(problems);
  const hintOf = (g: FormGroup) => (g.name === 'from' && senderFrom ? `Filled in with the sender of your last shipment, ${senderFrom}: change what differs.` : g.hint);
  const part = (g: FormGroup) => group(g.legend, g.name, errors, html`${g.fields.map(({ initial, ...spec }) => field({ ...spec, value: form[spec.name] || initial || '', errors }))}`, hintOf(g));
  // The folded parts open when they hold anything typed or refused.
  const open = MORE.some((g) => g.fields.some((f) => (form[f.name] ?? '').trim() !== '' || errors.has(f.name)) || errors.has(g.name));
  return (token) => html`<h1>New shipment and label</h1>
${errorSummary(problems, message, LABELS)}
<form method="post" action="${d.base}/shipments/new" novalidate>
${csrfField(token)}
${formKeyField(formKey)}
${GROUPS.map((g) => (!g.more ? part(g) : g === MORE[0] ? html`<details class="more"${open ? new Html(' open') : ''}><summary>More kinds of goods: contents lines ${MORE.map((m) => m.legend.replace(/\D+/g, '')).join(' and ')}</summary>${MORE.map(part)}</details>` : ''))}
<button type="submit">Create shipment and label</button>
</form>`;
}

// ---- a shipment ----

/** An address as the destination's post reads it (the labels' own lines), the country's name across a border. */
function addressBlock(a: Address, showCountry: boolean): Html {
  const lines = [...postalLines(a, showCountry), a.phone, a.email];
  return html`<address>${lines.filter(Boolean).join('\n')}</address>`;
}

function weight(w: { value: number; unit: string }): string {
  return `${w.value} ${w.unit}`;
}

/**
 * An address left empty is one problem to the API (`to: is required`); on the form each of its
 * required fields says so, so that all of them are marked in the first round.
 */
function requiredOfEmptyAddresses(problems: FieldProblem[]): FieldProblem[] {
  return problems.flatMap((p) =>
    (p.field === 'from' || p.field === 'to') && p.message === 'is required' ? [...REQUIRED_ADDRESS].map((key) => ({ field: `${p.field}.${key}`, message: 'is required' })) : [p],
  );
}

/** Why the label of a shipment whose parcel the carrier has scanned is not invalidated (`carrierHasParcel`). */
function scannedText(s: Shipment): string {
  return `the carrier has scanned the parcel (${words(s.status)})`;
}

/** `manifest`: the number of the manifest the label is on (the carrier has it: no invalidating), or null. */
function labelSection(d: Dashboard, s: Shipment, label: Label | null, preview: string | null, manifest: string | null, token: string): Html {
  if (!label) {
    return html`<section aria-labelledby="label-h"><h2 id="label-h">Label</h2><p>This shipment has no active label.</p>
<form method="post" action="${d.base}/shipments/${s.id}/label" class="actions">${csrfField(token)}
${field({ label: 'Format', name: 'format', value: 'PDF', options: options(LABEL_FORMATS), required: true })}
${field({ label: 'Size', name: 'size', value: '4x6', options: options(LABEL_SIZES), required: true })}
<button type="submit">Create label</button></form></section>`;
  }
  const printFile = html`<form method="post" action="${d.base}/shipments/${s.id}/print-file" class="actions">${csrfField(token)}
${field({ label: 'Print file layout', name: 'layout', value: 'label', options: options(PRINT_LAYOUTS), required: true })}
${field({ label: 'Print file format', name: 'printFormat', value: 'PDF', options: options(['PDF', 'ZPL']), required: true, hint: 'ZPL prints one label per label format: layout label only.' })}
<button type="submit" class="secondary">Print file</button></form>`;
  const invalidation = manifest
    ? html`<p>On manifest ${manifest}: the carrier has it, so it can no longer be invalidated.</p>`
    : carrierHasParcel(s.status)
      ? html`<p>${scannedText(s).replace(/^t/, 'T')}, so the label can no longer be invalidated.</p>`
      : html`<div class="actions">${actionButton(`${d.base}/shipments/${s.id}/invalidate`, 'Invalidate label', token, { label: label.id }, true)}</div>`;
  // A label's download link ends 24 hours after it was made (the spec's rule): then no preview and no
  // download, but a print file of it (a document of its own, with its own 24 hours) prints it again.
  if (Date.parse(label.expiresAt) <= Date.now()) {
    return html`<section aria-labelledby="label-h"><h2 id="label-h">Label</h2>
<dl><dt>Tracking number</dt><dd>${label.trackingNumber}</dd><dt>Created</dt><dd>${time(label.createdAt)}</dd><dt>Downloads ended</dt><dd>${time(label.expiresAt)}</dd></dl>
<p>Its download link and its customs documents’ ended 24 hours after it was made. To print it again, with the same tracking number, make a print file of it:</p>
${printFile}
${invalidation}
</section>`;
  }
  return html`<section aria-labelledby="label-h"><h2 id="label-h">Label</h2>
<dl><dt>Tracking number</dt><dd>${label.trackingNumber}</dd><dt>Created</dt><dd>${time(label.createdAt)}</dd><dt>Downloads until</dt><dd>${time(label.expiresAt)}</dd></dl>
<p class="preview"><img src="${preview ?? ''}" alt="Label ${label.trackingNumber}, preview" width="${previewPixels(label.size)[0]}" height="${previewPixels(label.size)[1]}" id="label-preview"></p>
<form method="get" action="${d.base}/labels/${label.id}/download" class="actions">
${field({ label: 'Download format', name: 'format', value: 'PDF', options: options(LABEL_FORMATS), required: true })}
<button type="submit">Download label</button></form>
${label.documents?.length ? html`<p>Customs documents: ${label.documents.map((doc, i) => html`${i ? ', ' : ''}<a href="${doc.url}">${words(doc.type)} (PDF)</a>`)}</p>` : ''}
${printFile}
${invalidation}
</section>`;
}

/**
 * An action of the shipment page the service refuses (a layout a ZPL file cannot have, a second label
 * from a stale tab): its message, to show back on the page, rather than an error page of its own.
 */
async function refusedOnPage<T>(action: () => Promise<T>): Promise<{ done: T } | { refused: string }> {
  try {
    return { done: await action() };
  } catch (err) {
    if (!(err instanceof AppError) || err instanceof NotFound || err.status >= 500) throw err;
    return { refused: err.message };
  }
}

/** The preview's box in CSS pixels (half the label's 203 dpi dots): the page keeps its place while the image loads. */
function previewPixels(size: LabelSize): [number, number] {
  const [w, h] = size.split('x').map(Number) as [number, number];
  return [Math.round(w * 101.5), Math.round(h * 101.5)];
}

function timeline(events: TrackingEvent[] | undefined): Html {
  if (!events?.length) return html`<p class="empty">No tracking events yet.</p>`;
  return html`<ol class="timeline" reversed>${events.map((e) => html`<li>${time(e.timestamp)}: <strong>${words(e.status)}</strong> — ${e.description}${e.location ? `, ${e.location}` : ''}</li>`)}</ol>`;
}

async function shipmentPage(d: Dashboard, accountId: string, id: string): Promise<{ title: string; body: (token: string) => Html }> {
  const s = await getShipment(d.ctx.db, accountId, id);
  const label = s.label ? await getLabel(d.ctx, accountId, s.label.id, 'PDF') : null;
  const preview = label ? (await getLabel(d.ctx, accountId, label.id, 'PNG')).url : null;
  const tracking = label ? await trackingInfo(d.ctx, accountId, label.id, { format: 'detailed', limit: 100, sort: 'newest_first' }) : null;
  const manifestId = label ? await manifestOfLabel(d.ctx, accountId, label.id) : null;
  const manifest = manifestId ? (await getManifest(d.ctx, accountId, manifestId)).number : null;
  const returns = s.returnOf ? [] : await returnsOf(d.ctx.db, accountId, s.id);
  const noReturn = s.returnOf ? undefined : returnRefusal(s)?.replace(`shipment ${s.id} `, 'this shipment ');
  const c = s.customs;
  const title = `${s.returnOf ? 'Return' : 'Shipment'} ${s.reference ?? s.id}`;
  return { title, body: (token) => html`<h1>${title}</h1>
<p>${statusBadge(s.status)} ${s.carrier} ${words(s.service)}${s.returnOf ? html` · return of <a href="${d.base}/shipments/${s.returnOf}">the original shipment</a>` : ''} · created ${time(s.createdAt)}</p>
<section aria-labelledby="addr-h"><h2 id="addr-h">Addresses</h2><div class="grid"><div><h3>From</h3>${addressBlock(s.from, crossesPostalBorder(s.from, s.to, s.carrier))}</div><div><h3>To</h3>${addressBlock(s.to, crossesPostalBorder(s.from, s.to, s.carrier))}</div></div></section>
<section aria-labelledby="parcel-h"><h2 id="parcel-h">Parcel</h2><dl><dt>Weight</dt><dd>${weight(s.parcel.weight)}</dd>${s.parcel.length ? html`<dt>Dimensions</dt><dd>${s.parcel.length} × ${s.parcel.width} × ${s.parcel.height} ${s.parcel.dimensionUnit}</dd>` : ''}</dl></section>
${c ? html`<section aria-labelledby="customs-h"><h2 id="customs-h">Customs</h2><dl><dt>Contents</dt><dd>${words(c.contentsType)}${c.contentsExplanation ? ` (${c.contentsExplanation})` : ''}</dd><dt>Signed by</dt><dd>${c.signer}</dd></dl>
${table('Declared items', ['Description', 'Quantity', 'Net weight', 'Value', 'HS code', 'Origin'], c.items.map((i) => [html`${i.description}`, html`${i.quantity}`, html`${weight(i.netWeight)}`, html`${i.value.amount} ${i.value.currency}`, html`${i.hsCode}`, html`${i.originCountry}`]), 'No items.')}</section>` : ''}
${labelSection(d, s, label, preview, manifest, token)}
<section aria-labelledby="tracking-h"><h2 id="tracking-h">Tracking</h2>${tracking ? html`<p>${tracking.status ? statusBadge(tracking.status) : ''}${tracking.estimatedDelivery && tracking.status !== 'delivered' ? html` · expected ${day(tracking.estimatedDelivery)}` : ''} · <a href="${tracking.trackingUrl}" rel="noreferrer">carrier's page</a></p>${timeline(tracking.events)}` : html`<p class="empty">Tracking starts with the label.</p>`}</section>
${s.returnOf ? '' : html`<section aria-labelledby="return-h"><h2 id="return-h">Return</h2><p>A return shipment goes from the recipient back to the sender with the carrier's return service.</p>${returns.length ? html`<ul class="returns">${returns.map((r) => html`<li><a href="${d.base}/shipments/${r.id}">Return ${r.reference ?? r.id}</a> ${statusBadge(r.status)} · made ${time(r.createdAt)}</li>`)}</ul>` : ''}${noReturn ? html`<p>No return can be made: ${noReturn}.</p>` : actionButton(`${d.base}/shipments/${s.id}/return`, 'Create a return shipment', token, { formKey: formKeyOf() })}</section>`}` };
}

/** A return asked for while the shipment already has one: the first of them, to ask about before another. */
class AskFirst extends Error {
  readonly first: Shipment;
  constructor(first: Shipment) {
    super('the shipment already has a return');
    this.first = first;
  }
}

export function shipmentPages(app: FastifyInstance, d: Dashboard): void {
  app.get<{ Querystring: ListQuery }>('/shipments', {
    config: PAGE,
    schema: { hide: true, querystring: { type: 'object', properties: { q: { type: 'string', maxLength: 2000 }, status: { type: 'string', maxLength: 40 }, carrier: { type: 'string', maxLength: 20 }, cursor: { type: 'string', maxLength: 200 }, notice: { type: 'string' } } } },
    handler: async (request, reply) => {
      const query = request.query;
      const status = (shipmentStatuses as readonly string[]).includes(query.status ?? '') ? query.status : undefined;
      const carrier = (CARRIERS as readonly string[]).includes(query.carrier ?? '') ? (query.carrier as Carrier) : undefined;
      const search = query.q?.trim() || undefined;
      // A longer search (a pasted address, a crafted link) is refused beside the search box, not on an error page.
      if (search && search.length > SEARCH_MAX) {
        const problems = [{ field: 'q', message: `at most ${SEARCH_MAX} characters: a tracking number, a reference or a name` }];
        return d.send(request, reply, { title: 'Shipments (problems)', section: 'shipments', status: 400, body: listPage(d, [], query, html``, problems) });
      }
      const page = pageOf({ limit: 50, ...(query.cursor ? { cursor: query.cursor } : {}) });
      const rows = await listShipments(d.ctx, d.user(request).accountId, page, { ...(status ? { status } : {}), ...(carrier ? { carrier } : {}), ...(search ? { search } : {}) });
      const older = olderLink(`${d.base}/shipments`, { q: search, status, carrier }, page, rows, 'Older shipments');
      return d.send(request, reply, { title: 'Shipments', section: 'shipments', body: listPage(d, rows.slice(0, page.limit), { ...query, ...(search ? { q: search } : {}) }, older) });
    },
  });

  app.get('/shipments/new', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => {
      // A warehouse sends from the same place day after day: the sender of the account's newest
      // shipment that is not a return (whose sender is the customer) fills the empty form.
      const last = await lastSender(d.ctx.db, d.user(request).accountId);
      const sender: Form = last ? Object.fromEntries(Object.entries(last.from).flatMap(([k, v]) => (typeof v === 'string' ? [[`from.${k}`, v]] : []))) : {};
      const page = newShipmentPage(d, { 'parcel.weight.unit': 'kg', ...sender }, formKeyOf(), undefined, undefined, last?.shipment);
      return d.send(request, reply, { title: 'New shipment', section: 'shipments/new', body: page });
    },
  });

  app.post('/shipments/new', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => {
      const fields = d.form(request);
      const form = readForm(fields);
      const formKey = formKeyOf(fields.one('formKey'));
      const accountId = d.user(request).accountId;
      const refuse = (problems: FieldProblem[], message?: string) =>
        d.send(request, reply, { title: 'New shipment (problems)', section: 'shipments/new', status: 400, body: newShipmentPage(d, form, formKey, problems, message) });
      const body = bodyOf(form);
      const format = form['label.format'] || 'PDF';
      const size = form['label.size'] || '4x6';
      const labelProblems: FieldProblem[] = [
        ...((LABEL_FORMATS as readonly string[]).includes(format) ? [] : [{ field: 'label.format', message: `must be one of ${LABEL_FORMATS.join(', ')}` }]),
        ...((LABEL_SIZES as readonly string[]).includes(size) ? [] : [{ field: 'label.size', message: `must be one of ${LABEL_SIZES.join(', ')}` }]),
      ];
      // The API's own checks, every problem at once: the schema first, then the service's rules. While
      // other fields have problems, what the carrier, service and addresses decide (the route, the
      // addresses' checks, a missing declaration) is shown with them.
      const typed = numberProblems(form);
      const gaps = emptyLineProblems(form);
      // With a line left empty the lines after it are sent moved up: their own problems wait for the next round.
      const firstGap = gaps.length ? Number(/\[(\d+)\]/.exec(gaps[0]!.field)![1]) : Number.POSITIVE_INFINITY;
      const movedUp = (field: string) => Number(/^customs\.items\[(\d+)\]/.exec(field)?.[1] ?? -1) >= firstGap;
      const schema = shipmentBodyProblems(body).filter((p) => !typed.some((t) => t.field === p.field) && !movedUp(p.field));
      const problems = [...typed, ...gaps, ...requiredOfEmptyAddresses(schema), ...labelProblems];
      // What the carrier, service and addresses decide can be told once those parts are whole (an
      // e-mail address or a phone number with a problem holds nothing back).
      if (problems.length && !problems.some((p) => ROUTE_PARTS.test(p.field))) {
        const within = (part: string) => !problems.some((p) => p.field === part || p.field.startsWith(`${part}.`) || p.field.startsWith(`${part}[`));
        problems.unshift(...checksOfWholeParts(body as unknown as NewShipment, { customs: within('customs') && gaps.length === 0, parcel: within('parcel') }));
      }
      if (problems.length) return refuse(problems);
      // The same form sent again (Back and submit, a double click) makes no second shipment: the
      // shipment is the form's one transaction; its label follows, and the shipment's page offers
      // one should that fail.
      let shipment: Shipment | undefined;
      let sending: FormSending;
      try {
        sending = await onceForForm(d.ctx, accountId, formKey, { shipment: body, format, size }, async () => {
          shipment = await createShipment(d.ctx, accountId, body as unknown as NewShipment);
          return `/shipments/${shipment.id}`;
        });
      } catch (err) {
        if (err instanceof InvalidInput) return refuse(err.details ?? [], err.message);
        throw err;
      }
      if (sending.again) return sentAgain(d, reply, sending, { made: 'shipment', list: '/shipments' });
      const label = await createLabel(d.ctx, accountId, { shipmentId: shipment!.id, format: format as LabelFormat, size: size as LabelSize });
      return d.redirect(reply, sending.answer, `Shipment created; label ${label.trackingNumber} is ready.`);
    },
  });

  app.get<{ Params: { id: string } }>('/shipments/:id', {
    config: PAGE,
    schema: { hide: true, params: idParams },
    handler: async (request, reply) => {
      const { title, body } = await shipmentPage(d, d.user(request).accountId, request.params.id);
      return d.send(request, reply, { title, section: 'shipments', body });
    },
  });

  app.post<{ Params: { id: string } }>('/shipments/:id/label', {
    config: PAGE,
    schema: { hide: true, params: idParams },
    handler: async (request, reply) => {
      const form = d.form(request);
      const format = (LABEL_FORMATS as readonly string[]).includes(form.one('format')) ? (form.one('format') as LabelFormat) : 'PDF';
      const size = (LABEL_SIZES as readonly string[]).includes(form.one('size')) ? (form.one('size') as LabelSize) : '4x6';
      const made = await refusedOnPage(() => createLabel(d.ctx, d.user(request).accountId, { shipmentId: request.params.id, format, size }));
      if ('refused' in made) return d.redirect(reply, `/shipments/${request.params.id}`, `No label was created: ${made.refused}`, true);
      return d.redirect(reply, `/shipments/${request.params.id}`, `Label ${made.done.trackingNumber} is ready.`);
    },
  });

  app.post<{ Params: { id: string } }>('/shipments/:id/invalidate', {
    config: PAGE,
    schema: { hide: true, params: idParams },
    handler: async (request, reply) => {
      const accountId = d.user(request).accountId;
      const form = d.form(request);
      const s = await getShipment(d.ctx.db, accountId, request.params.id);
      if (!s.label) return d.redirect(reply, `/shipments/${s.id}`, 'This shipment has no active label.', true);
      // The label the page showed: from a page older than the shipment's current label, nothing is invalidated.
      if (form.one('label') !== s.label.id) return d.redirect(reply, `/shipments/${s.id}`, `The shipment's label has changed since that page was shown: label ${s.label.trackingNumber} is not invalidated.`, true);
      // Scanned since the page was shown: nothing to ask.
      if (carrierHasParcel(s.status)) return d.redirect(reply, `/shipments/${s.id}`, `Label ${s.label.trackingNumber} is not invalidated: ${scannedText(s)}, so it can no longer be invalidated.`, true);
      if (form.one('confirmed') !== 'yes') {
        return d.send(request, reply, {
          title: 'Invalidate the label?',
          section: 'shipments',
          body: confirmation({
            question: `Invalidate label ${s.label.trackingNumber}?`,
            consequence: 'The carrier will not take a parcel with this label, and it cannot be used again. This cannot be undone; the shipment can have a new label afterwards.',
            action: `${d.base}/shipments/${s.id}/invalidate`,
            button: 'Invalidate label',
            cancel: `${d.base}/shipments/${s.id}`,
            hidden: { label: s.label.id },
          }),
        });
      }
      try {
        await invalidateLabel(d.ctx, accountId, s.label.id);
      } catch (err) {
        // Scanned or put on a manifest since the page was shown.
        if (err instanceof Conflict) return d.redirect(reply, `/shipments/${s.id}`, `Label ${s.label.trackingNumber} is not invalidated: ${err.message}.`, true);
        throw err;
      }
      return d.redirect(reply, `/shipments/${s.id}`, `Label ${s.label.trackingNumber} is invalidated.`);
    },
  });

  app.post<{ Params: { id: string } }>('/shipments/:id/return', {
    config: PAGE,
    schema: { hide: true, params: idParams },
    handler: async (request, reply) => {
      const accountId = d.user(request).accountId;
      const form = d.form(request);
      // The same form sent again (a double click, Back and a second press) makes no second return: it
      // leads to the one the first sending made. A second return of the same parcel from another form
      // (another tab, a later visit) is asked about first.
      const formKey = formKeyOf(form.one('formKey'));
      let sending: FormSending;
      try {
        sending = await onceForForm(d.ctx, accountId, formKey, { returnOf: request.params.id }, async () => {
          const earlier = await returnsOf(d.ctx.db, accountId, request.params.id, 1);
          if (earlier.length && form.one('confirmed') !== 'yes') throw new AskFirst(earlier[0]!);
          return `/shipments/${(await createReturn(d.ctx, accountId, request.params.id, {})).id}`;
        });
      } catch (err) {
        if (err instanceof AskFirst) {
          return d.send(request, reply, {
            title: 'Create another return?',
            section: 'shipments',
            body: confirmation({
              question: 'Create another return shipment?',
              consequence: `This shipment already has a return (Return ${err.first.reference ?? err.first.id}). Another one is a second parcel coming back.`,
              action: `${d.base}/shipments/${request.params.id}/return`,
              button: 'Create another return shipment',
              cancel: `${d.base}/shipments/${request.params.id}`,
              hidden: { formKey },
            }),
          });
        }
        // What the return's own checks refuse (a return from the US worth an EEI filing, which this
        // button cannot give) is said on the shipment's page.
        if (err instanceof InvalidInput) return d.redirect(reply, `/shipments/${request.params.id}`, `No return was made: ${err.message}. Make it through the API (POST /v1/shipments/{id}/returns) with its customs.`, true);
        throw err;
      }
      if (sending.again) return sentAgain(d, reply, sending, { made: 'return shipment', list: `/shipments/${request.params.id}` });
      return d.redirect(reply, sending.answer, 'Return shipment created; create its label below.');
    },
  });

  app.post<{ Params: { id: string } }>('/shipments/:id/print-file', {
    config: PAGE,
    schema: { hide: true, params: idParams },
    handler: async (request, reply) => {
      const accountId = d.user(request).accountId;
      const form = d.form(request);
      const s = await getShipment(d.ctx.db, accountId, request.params.id);
      if (!s.label) return d.redirect(reply, `/shipments/${s.id}`, 'This shipment has no active label to print.', true);
      const layout = (PRINT_LAYOUTS as readonly string[]).includes(form.one('layout')) ? (form.one('layout') as PrintLayout) : 'label';
      const format = form.one('printFormat') === 'ZPL' ? 'ZPL' : 'PDF';
      const made = await refusedOnPage(() => createPrintFile(d.ctx, accountId, { labelIds: [s.label!.id], layout, format }));
      if ('refused' in made) return d.redirect(reply, `/shipments/${s.id}`, `No print file was made: ${made.refused}`, true);
      return reply.redirect(made.done.url, 303);
    },
  });

  app.get<{ Params: { id: string }; Querystring: { format?: string } }>('/labels/:id/download', {
    config: PAGE,
    schema: { hide: true, params: idParams, querystring: { type: 'object', properties: { format: { type: 'string', maxLength: 10 } } } },
    handler: async (request, reply) => {
      const format = request.query.format ?? 'PDF';
      if (!(LABEL_FORMATS as readonly string[]).includes(format)) throw new InvalidInput(`format must be one of ${LABEL_FORMATS.join(', ')}`);
      const label = await getLabel(d.ctx, d.user(request).accountId, request.params.id, format as LabelFormat);
      // Past its 24 hours the link would answer 410 in JSON: say so on the shipment's page instead.
      if (label.status !== 'active' || Date.parse(label.expiresAt) <= Date.now()) {
        return d.redirect(reply, `/shipments/${label.shipmentId}`, label.status !== 'active' ? `Label ${label.trackingNumber} is invalidated and can no longer be downloaded.` : `The download link of label ${label.trackingNumber} ended 24 hours after it was made: make a print file of it to print it again.`, true);
      }
      return reply.redirect(label.url, 303);
    },
  });
}
