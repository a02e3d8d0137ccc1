// The pieces every dashboard page is built from: escaping, the page frame (skip link, navigation,
// one h1), form fields that show the API's messages beside them, tables and dates. Every dynamic
// value goes through `esc` (or a helper that calls it); nothing here loads anything from elsewhere.
import { randomUUID } from 'node:crypto';
import type { FieldProblem } from '../errors.ts';
import { escapeHtml as esc } from '../http/html.ts';
import { cursorAfter } from '../http/pagination.ts';
import type { Page } from '../db/page.ts';
import { isUuid } from '../db/ids.ts';


/** A trusted fragment of HTML (built by these helpers), as opposed to text that must be escaped. */
export class Html {
  readonly html: string;
  constructor(html: string) {
    this.html = html;
  }
  toString(): string {
    return this.html;
  }
}

/** Template tag: interpolated values are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.html;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return esc(v);
}

export interface PageFrame {
  /** The path the dashboard is reached at, e.g. `/dashboard`. */
  base: string;
  title: string;
  /** The signed-in user, or none on the sign-in page. */
  user?: { email: string; accountName: string };
  /** Which navigation entry is this page's. */
  section?: Section;
  csrfToken?: string;
  /** One message above the content (after an action), announced to screen readers. */
  notice?: string;
  /** The notice says the action was refused: an alert, in the colours of an error. */
  refused?: boolean;
}

export const SECTIONS = [
  ['shipments', 'Shipments'],
  ['shipments/new', 'New shipment'],
  ['batches', 'Batches'],
  ['manifests', 'Manifests'],
  ['webhooks', 'Webhooks'],
  ['keys', 'API keys'],
] as const;
export type Section = (typeof SECTIONS)[number][0];

export function page(frame: PageFrame, body: Html): string {
  const { base, user } = frame;
  const nav = user
    ? html`<nav aria-label="Dashboard"><ul>${SECTIONS.map(([path, name]) => html`<li><a href="${base}/${path}"${frame.section === path ? new Html(' aria-current="page"') : ''}>${name}</a></li>`)}</ul></nav>
<form method="post" action="${base}/sign-out" class="sign-out">${csrfField(frame.csrfToken)}<span>${user.email} · ${user.accountName}</span> <button type="submit">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${esc(frame.title)} · Shipping dashboard</title>
<link rel="icon" href="${esc(base)}/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${esc(base)}/assets/dashboard.css">
<script src="${esc(base)}/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><p class="brand"><a href="${esc(base)}/shipments">Shipping</a></p>${nav}</header>
<main id="main" tabindex="-1">
${frame.notice ? `<p class="notice${frame.refused ? ' refused' : ''}" role="${frame.refused ? 'alert' : 'status'}" id="notice" tabindex="-1">${esc(frame.notice)}</p>\n` : ''}${body.html}
</main>
</body>
</html>
`;
}

export function csrfField(token: string | undefined): Html {
  return token ? html`<input type="hidden" name="_csrf" value="${token}">` : new Html('');
}

/** `to.postalCode` → `f-to-postalCode`: an element id for a field path. */
export function fieldId(path: string): string {
  return `f-${path.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/-$/, '')}`;
}

/** The messages of a failed form, by field path. */
export type FieldErrors = Map<string, string>;

export function fieldErrors(problems: FieldProblem[] | undefined): FieldErrors {
  const map: FieldErrors = new Map();
  for (const p of problems ?? []) if (!map.has(p.field)) map.set(p.field, p.message);
  return map;
}

export interface FieldOptions {
  label: string;
  /** Field path: the form field's name and the key of its error. */
  name: string;
  value?: string;
  type?: 'text' | 'email' | 'password' | 'number' | 'url' | 'search';
  required?: boolean;
  /**
   * When a field the browser cannot require is needed, shown beside its label instead of "(optional)":
   * `required with a declaration`; '' shows nothing (its group's hint says it).
   */
  requiredWhen?: string;
  hint?: string;
  autocomplete?: string;
  step?: string;
  /** The range a number field takes, which the browser checks before sending. */
  min?: number;
  max?: number;
  /** The keyboard a phone shows for a text field of numbers (`decimal`, `numeric`). */
  inputMode?: 'decimal' | 'numeric';
  /** The most characters the browser lets one type. */
  maxLength?: number;
  errors?: FieldErrors;
  /** `<select>` options as [value, label]. */
  options?: readonly (readonly [string, string])[];
}

/** A labelled input (or select) with its hint and, when the form came back refused, its message beside it. */
export function field(o: FieldOptions): Html {
  const id = fieldId(o.name);
  const error = o.errors?.get(o.name);
  const described = [o.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attrs = new Html(
    [
      `id="${esc(id)}" name="${esc(o.name)}"`,
      o.required ? 'required' : '',
      o.autocomplete ? `autocomplete="${esc(o.autocomplete)}"` : '',
      o.step ? `step="${esc(o.step)}"` : '',
      o.min !== undefined ? `min="${o.min}"` : '',
      o.max !== undefined ? `max="${o.max}"` : '',
      o.inputMode ? `inputmode="${o.inputMode}"` : '',
      o.maxLength ? `maxlength="${o.maxLength}"` : '',
      described ? `aria-describedby="${esc(described)}"` : '',
      error ? 'aria-invalid="true"' : '',
    ].filter(Boolean).join(' '),
  );
  const control = o.options
    ? html`<select ${attrs}>${o.options.map(([v, l]) => html`<option value="${v}"${v === (o.value ?? '') ? new Html(' selected') : ''}>${l}</option>`)}</select>`
    : html`<input type="${o.type ?? 'text'}" ${attrs} value="${o.value ?? ''}">`;
  return html`<div class="field${error ? ' invalid' : ''}"><label for="${id}">${o.label}${o.required || o.requiredWhen === '' ? '' : html` <span class="optional">(${o.requiredWhen ?? 'optional'})</span>`}</label>${control}${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}</div>`;
}

/** A fieldset for a part of the body (`to`, `parcel`, `customs`): a problem of the whole part shows under its legend. */
export function group(legend: string, name: string, errors: FieldErrors, content: Html, hint?: string): Html {
  const id = fieldId(name);
  const error = errors.get(name);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<fieldset id="${id}"${described ? new Html(` aria-describedby="${esc(described)}"`) : ''}><legend>${legend}</legend>${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}<div class="grid">${content}</div></fieldset>`;
}

/** The list of a refused form's problems, each linking to its field; announced when the page loads. */
export function errorSummary(problems: FieldProblem[] | undefined, message?: string, labels?: ReadonlyMap<string, string>): Html {
  if (!problems?.length && !message) return new Html('');
  return html`<div class="error-summary" role="alert" tabindex="-1" id="error-summary"><h2>${problems?.length ? 'The form has problems' : 'That did not work'}</h2>${message && !problems?.length ? html`<p>${message}</p>` : ''}${problems?.length ? html`<ul>${problems.map((p) => html`<li><a href="#${fieldId(p.field)}">${labels?.get(p.field) ?? p.field}: ${p.message}</a></li>`)}</ul>` : ''}</div>`;
}

/** A table with a caption and column headers; `rows` are cells already made safe. */
export function table(caption: string, headers: string[], rows: Html[][], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  // A table wider than a phone scrolls inside its region, which the keyboard can reach (tabindex).
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0"><table><caption>${caption}</caption><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table></div>`;
}

/** A timestamp as people read it: `2026-01-02 10:00:00 UTC`. */
export function readableTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}

/** A day people read (an estimated delivery: a day, not a moment), `2026-12-04`; the script writes it in the reader's language. */
export function day(iso: string): Html {
  return html`<time datetime="${iso.slice(0, 10)}" data-day>${iso.slice(0, 10)}</time>`;
}

/** A timestamp people read, with the machine-readable one kept. */
export function time(iso: string | null | undefined): Html {
  if (!iso) return new Html('—');
  return html`<time datetime="${iso}">${readableTime(iso)}</time>`;
}

/** A POST form of one button (invalidate, revoke, redeliver): CSRF-protected, works without script. */
export function actionButton(action: string, label: string, csrfToken: string, hidden: Record<string, string> = {}, danger = false): Html {
  return html`<form method="post" action="${action}" class="inline">${csrfField(csrfToken)}${Object.entries(hidden).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit"${danger ? new Html(' class="danger"') : ''}>${label}</button></form>`;
}

/**
 * The page that asks before an action that cannot be undone (invalidating a label, revoking a key):
 * the first press of its button posts without `confirmed` and gets this page; its own button posts
 * the same form again with `confirmed=yes`. Cancel goes back without changing anything.
 */
export function confirmation(o: { question: string; consequence: string; action: string; button: string; cancel: string; hidden?: Record<string, string> }): (csrfToken: string) => Html {
  return (token) => html`<h1>${o.question}</h1>
<p>${o.consequence}</p>
<div class="actions">${actionButton(o.action, o.button, token, { ...o.hidden, confirmed: 'yes' }, true)} <a href="${o.cancel}">Cancel</a></div>`;
}

/** A code of the API (`in_transit`, `priority_mail`, `commercial_invoice`) as words. */
export function words(code: string): string {
  return code.replace(/_/g, ' ');
}

/** A status word (`in_transit`, `succeeded`) as a badge. */
export function statusBadge(status: string): Html {
  return html`<span class="status">${words(status)}</span>`;
}

/** The link to the next (older) page of a newest-first list, keeping its filters; nothing on the last page. */
export function olderLink(path: string, filters: Record<string, string | undefined>, page: Page, rows: { id: string }[], text: string): Html {
  const cursor = cursorAfter(page, rows);
  if (cursor === null) return new Html('');
  const params = new URLSearchParams(Object.entries({ ...filters, cursor }).filter((e): e is [string, string] => Boolean(e[1])));
  return html`<p><a href="${path}?${params}" rel="next">${text}</a></p>`;
}

/** A form's key for `onceForForm`: new each time an empty form is shown, the one it was sent with while it comes back refused. */
export function formKeyOf(sent?: string): string {
  return sent !== undefined && isUuid(sent) ? sent : randomUUID();
}

/** The hidden field that carries a form's key. */
export function formKeyField(key: string): Html {
  return html`<input type="hidden" name="formKey" value="${key}">`;
}
