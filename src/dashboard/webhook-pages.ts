// Webhooks in the dashboard: the account's subscriptions with a form to add one, and a webhook's page
// (change it; its delivery log, each delivery with its attempts and a button to send it again). The
// forms are checked as `POST /v1/webhooks` and `PATCH /v1/webhooks/{id}` check a body, so a refused
// form shows the API's own messages beside its fields. Handlers only call webhooks/service.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { EVENT_TYPES, type EventType } from '../db/events.ts';
import { Conflict, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import { pageOf } from '../http/pagination.ts';
import { uuid } from '../http/schemas.ts';
import { createWebhook, createWebhookBody, deleteWebhook, getWebhook, listDeliveries, listWebhooks, redeliver, updateWebhook, webhookRuleProblems, type Delivery, type Webhook, type WebhookPatch } from '../webhooks/service.ts';
import { onceForForm, type FormSending } from '../http/idempotency.ts';
import { actionButton, confirmation, csrfField, errorSummary, field, fieldErrors, fieldId, formKeyField, formKeyOf, html, Html, table, time, type FieldErrors, statusBadge, olderLink } from './html.ts';
import { accountShipmentsByIds, type Shipment } from '../shipments/service.ts';
import { PAGE, sentAgain, type Dashboard } from './routes.ts';
import { bodyProblems } from './validation.ts';



const LIST_SIZE = 50;
const DELIVERIES_PER_PAGE = 20;
const listQuery = { type: 'object', properties: { cursor: { type: 'string', maxLength: 200 }, notice: { type: 'string' } } } as const;
const hookParams = { type: 'object', required: ['id'], properties: { id: uuid } } as const;
const deliveryParams = { type: 'object', required: ['id', 'deliveryId'], properties: { id: uuid, deliveryId: uuid } } as const;

/** What the webhook form holds, as typed (the secret is never sent back to the page). */
interface WebhookForm {
  url: string;
  events: string[];
  active: boolean;
  /** Empty: none (create) or unchanged (edit). */
  secret: string;
  /** Edit only: send deliveries unsigned from now on. */
  removeSecret: boolean;
}

const EMPTY_FORM: WebhookForm = { url: '', events: [], active: true, secret: '', removeSecret: false };

function readForm(request: FastifyRequest, d: Dashboard): WebhookForm {
  const form = d.form(request);
  return { url: form.one('url').trim(), events: form.all('events'), active: form.one('active') === 'true', secret: form.one('secret'), removeSecret: form.one('removeSecret') === 'true' };
}

/** The form as the API's body; empty fields are left out, so the API's "is required" names them. */
function bodyOf(form: WebhookForm): Record<string, unknown> {
  return {
    ...(form.url ? { url: form.url } : {}),
    ...(form.events.length ? { events: form.events } : {}),
    active: form.active,
    ...(form.secret ? { secret: form.secret } : {}),
  };
}

/**
 * Every problem of the form at once, in the form's order: the schema's, then the service's own rules
 * (an ftp URL, a whsec_ secret that is not base64) for the fields the schema found no fault in. A
 * problem of one event (`events[1]`) is shown beside the group.
 */
function formProblems(d: Dashboard, form: WebhookForm): FieldProblem[] {
  const schema = bodyProblems(createWebhookBody, bodyOf(form)).map((p) => (/^events\[\d+\]$/.test(p.field) ? { ...p, field: 'events' } : p));
  const checked = { ...(form.url ? { url: form.url } : {}), ...(form.secret && !form.removeSecret ? { secret: form.secret } : {}) };
  const rules = webhookRuleProblems(d.ctx, checked).filter((p) => !schema.some((s) => s.field === p.field));
  const both = form.secret && form.removeSecret ? [{ field: 'secret', message: 'give a new secret or remove it, not both' }] : [];
  const order = [...WEBHOOK_LABELS.keys()];
  return [...schema, ...rules, ...both].sort((a, b) => order.indexOf(a.field) - order.indexOf(b.field));
}

/** What the error summary calls each field: its label on the add form. */
const WEBHOOK_LABELS = new Map([['url', 'URL'], ['events', 'Events'], ['active', 'Active'], ['secret', 'Signing secret']]);
/** The change form's labels: its secret field is the new one. */
const CHANGE_LABELS = new Map([...WEBHOOK_LABELS, ['secret', 'New signing secret']]);

/** The URL, events and active fields shared by the add and the change form. */
function webhookFields(form: WebhookForm, errors: FieldErrors, mode: 'create' | 'edit'): Html {
  const eventsError = errors.get('events');
  return html`${field({ label: 'URL', name: 'url', type: 'url', value: form.url, required: true, hint: 'Absolute http(s) address the events are POSTed to (https only in production).', errors })}
<fieldset id="${fieldId('events')}" class="checks${eventsError ? ' invalid' : ''}"${eventsError ? new Html(` aria-describedby="${fieldId('events')}-error"`) : ''}>
<legend>Events</legend>
<p class="hint">The kinds of event sent to this URL; choose at least one.</p>
${EVENT_TYPES.map((e) => {
  const id = fieldId(`events-${e}`);
  return html`<label for="${id}"><input type="checkbox" id="${id}" name="events" value="${e}"${form.events.includes(e) ? new Html(' checked') : ''}> <code>${e}</code></label>`;
})}
${eventsError ? html`<p class="error" id="${fieldId('events')}-error">${eventsError}</p>` : ''}
</fieldset>
<div class="field checks"><label for="${fieldId('active')}"><input type="checkbox" id="${fieldId('active')}" name="active" value="true"${form.active ? new Html(' checked') : ''}> Active: events are sent</label></div>
${field({
  label: mode === 'create' ? 'Signing secret' : 'New signing secret',
  name: 'secret',
  type: 'password',
  autocomplete: 'off',
  hint: mode === 'create'
    ? 'Signs every delivery (Standard Webhooks): whsec_ and base64, or any other text. It is never shown again; without one, deliveries are not signed.'
    : 'Replaces the secret deliveries are signed with; leave empty to keep the current one. It is never shown.',
  errors,
})}
${mode === 'edit' ? html`<div class="field checks"><label for="${fieldId('removeSecret')}"><input type="checkbox" id="${fieldId('removeSecret')}" name="removeSecret" value="true"${form.removeSecret ? new Html(' checked') : ''}> Remove the signing secret (deliveries are sent unsigned)</label></div>` : ''}`;
}

// ---- the list ----

/** `formKey`: the add form's key (onceForForm), new each time the empty form is shown. */
function listPage(d: Dashboard, hooks: Webhook[], older: Html, form: WebhookForm, formKey: string, problems: FieldProblem[], message?: string): (token: string) => Html {
  const errors = fieldErrors(problems);
  return (token) => html`<h1>Webhooks</h1>
<section aria-labelledby="webhooks-list">
<h2 id="webhooks-list">Your webhooks</h2>
${table(
  'Webhooks, newest first',
  ['URL', 'Events', 'Active', 'Created'],
  hooks.map((h) => [html`<a href="${d.base}/webhooks/${h.id}">${h.url}</a>`, html`${h.events.join(', ')}`, html`${h.active ? 'Yes' : 'No (nothing is sent)'}`, time(h.createdAt)]),
  'No webhooks yet.',
)}
${older}
</section>
<section aria-labelledby="webhooks-add">
<h2 id="webhooks-add">Add a webhook</h2>
${errorSummary(problems, message, WEBHOOK_LABELS)}
<form method="post" action="${d.base}/webhooks" novalidate>
${csrfField(token)}
${formKeyField(formKey)}
${webhookFields(form, errors, 'create')}
<button type="submit">Add the webhook</button>
</form>
</section>`;
}

// ---- a webhook's page ----

/**
 * The shipment (or, for `batch.completed`, the batch) a delivery's event is about, linked to its page:
 * a shipment as a picker knows it, by its reference and tracking number, when it has them.
 */
function subjectLink(d: Dashboard, delivery: Delivery, shipments: ReadonlyMap<string, Shipment>): Html {
  if (delivery.type === 'batch.completed') return html`<a href="${d.base}/batches/${delivery.subjectId}">Batch <code>${delivery.subjectId}</code></a>`;
  const s = shipments.get(delivery.subjectId);
  const known = [s?.reference, s?.label?.trackingNumber].filter(Boolean).join(', ');
  return html`<a href="${d.base}/shipments/${delivery.subjectId}">Shipment ${known ? known : html`<code>${delivery.subjectId}</code>`}</a>`;
}

/** `n`: the delivery's place on the page, which names its attempts' table apart from the others' (two deliveries may share a type and a time). */
function deliveryItem(d: Dashboard, hook: Webhook, delivery: Delivery, n: number, token: string, shipments: ReadonlyMap<string, Shipment>): Html {
  return html`<article class="delivery" aria-labelledby="delivery-${delivery.id}">
<h3 id="delivery-${delivery.id}"><code>${delivery.type}</code> ${statusBadge(delivery.status)}</h3>
<dl><dt>About</dt><dd>${subjectLink(d, delivery, shipments)}</dd><dt>Created</dt><dd>${time(delivery.createdAt)}</dd><dt>Event id</dt><dd><code>${delivery.eventId}</code></dd><dt>Next attempt</dt><dd>${delivery.nextAttemptAt ? time(delivery.nextAttemptAt) : 'none'}</dd></dl>
${table(
  `Attempts of delivery ${n} on this page (${delivery.type}), oldest first`,
  ['Time', 'Response status', 'Duration', 'Error'],
  delivery.attempts.map((a) => [time(a.at), html`${a.responseStatus ?? 'no answer'}`, html`${a.durationMs} ms`, html`${a.error ?? '—'}`]),
  'No attempt yet.',
)}
${hook.active ? actionButton(`${d.base}/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`, 'Redeliver', token) : ''}
</article>`;
}

interface DetailView {
  form?: WebhookForm;
  problems?: FieldProblem[];
  message?: string;
  status?: number;
  cursor?: string;
}

async function detailPage(d: Dashboard, request: FastifyRequest, reply: FastifyReply, id: string, view: DetailView = {}): Promise<FastifyReply> {
  const { accountId } = d.user(request);
  const hook = await getWebhook(d.ctx, accountId, id);
  const page = pageOf({ limit: DELIVERIES_PER_PAGE, ...(view.cursor ? { cursor: view.cursor } : {}) });
  const rows = await listDeliveries(d.ctx, accountId, id, page);
  const deliveries = rows.slice(0, page.limit);
  const about = deliveries.filter((x) => x.type !== 'batch.completed').map((x) => x.subjectId);
  const shipments = new Map((await accountShipmentsByIds(d.ctx.db, accountId, about)).map((s) => [s.id, s]));
  const older = olderLink(`${d.base}/webhooks/${id}`, {}, page, rows, 'Older deliveries');
  const form = view.form ?? { ...EMPTY_FORM, url: hook.url, events: hook.events, active: hook.active };
  const problems = view.problems ?? [];
  return d.send(request, reply, {
    title: `Webhook ${hook.url}`,
    section: 'webhooks',
    ...(view.status ? { status: view.status } : {}),
    body: (token) => html`<h1>Webhook ${hook.url}</h1>
<p><a href="${d.base}/webhooks">All webhooks</a></p>
${!view.form && view.message ? errorSummary(undefined, view.message) : ''}
<dl><dt>Active</dt><dd>${hook.active ? 'Yes' : 'No: nothing is sent until it is activated again'}</dd><dt>Created</dt><dd>${time(hook.createdAt)}</dd><dt>Changed</dt><dd>${time(hook.updatedAt)}</dd><dt>Id</dt><dd><code>${hook.id}</code></dd></dl>
<section aria-labelledby="webhook-edit">
<h2 id="webhook-edit">Change the webhook</h2>
${view.form ? errorSummary(problems, view.message, CHANGE_LABELS) : ''}
<form method="post" action="${d.base}/webhooks/${hook.id}" novalidate>
${csrfField(token)}
${webhookFields(form, fieldErrors(problems), 'edit')}
<button type="submit">Save the webhook</button>
</form>
</section>
<section aria-labelledby="webhook-deliveries">
<h2 id="webhook-deliveries">Deliveries</h2>
${hook.active ? '' : html`<p class="hint">The webhook is inactive: activate it to send deliveries again.</p>`}
${deliveries.length
  ? html`<p class="hint">Newest first.</p>${deliveries.map((delivery, i) => deliveryItem(d, hook, delivery, i + 1, token, shipments))}`
  : html`<p class="empty">No deliveries yet: one is made for each event this webhook receives.</p>`}
${older}
</section>
<section aria-labelledby="webhook-delete">
<h2 id="webhook-delete">Delete the webhook</h2>
<p>Its deliveries and their history go with it. To stop deliveries for a while and keep them, untick Active instead.</p>
${actionButton(`${d.base}/webhooks/${hook.id}/delete`, 'Delete the webhook', token, {}, true)}
</section>`,
  });
}

export function webhookPages(app: FastifyInstance, d: Dashboard): void {
  const listAndForm = async (request: FastifyRequest, reply: FastifyReply, o: { cursor?: string; form?: WebhookForm; formKey?: string; problems?: FieldProblem[]; message?: string; status?: number } = {}) => {
    const page = pageOf({ limit: LIST_SIZE, ...(o.cursor ? { cursor: o.cursor } : {}) });
    const rows = await listWebhooks(d.ctx, d.user(request).accountId, page);
    const older = olderLink(`${d.base}/webhooks`, {}, page, rows, 'Older webhooks');
    return d.send(request, reply, {
      title: 'Webhooks',
      section: 'webhooks',
      ...(o.status ? { status: o.status } : {}),
      // The add form's key: new each time the page is shown, kept while the form comes back refused.
      body: listPage(d, rows.slice(0, page.limit), older, o.form ?? EMPTY_FORM, formKeyOf(o.formKey), o.problems ?? [], o.message),
    });
  };

  app.get<{ Querystring: { cursor?: string } }>('/webhooks', {
    config: PAGE,
    schema: { hide: true, querystring: listQuery },
    handler: async (request, reply) => listAndForm(request, reply, request.query.cursor ? { cursor: request.query.cursor } : {}),
  });

  app.post('/webhooks', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => {
      const form = readForm(request, d);
      const formKey = formKeyOf(d.form(request).one('formKey'));
      const refused = (problems: FieldProblem[], message?: string) => listAndForm(request, reply, { form, formKey, problems, status: 400, ...(message ? { message } : {}) });
      const problems = formProblems(d, form);
      if (problems.length) return refused(problems);
      // The same form sent again (a double click, a retry, Back and submit) adds no second webhook,
      // which would get every event twice.
      let sending: FormSending;
      try {
        sending = await onceForForm(d.ctx, d.user(request).accountId, formKey, { url: form.url, events: form.events, active: form.active }, async () => {
          const hook = await createWebhook(d.ctx, d.user(request).accountId, { url: form.url, events: form.events as EventType[], active: form.active, ...(form.secret ? { secret: form.secret } : {}) });
          return `/webhooks/${hook.id}`;
        });
      } catch (err) {
        if (err instanceof InvalidInput) return refused(err.details ?? [], err.message);
        throw err;
      }
      if (sending.again) return sentAgain(d, reply, sending, { made: 'webhook', list: '/webhooks' });
      return d.redirect(reply, sending.answer, 'Webhook added.');
    },
  });

  app.get<{ Params: { id: string }; Querystring: { cursor?: string } }>('/webhooks/:id', {
    config: PAGE,
    schema: { hide: true, params: hookParams, querystring: listQuery },
    handler: async (request, reply) => detailPage(d, request, reply, request.params.id, request.query.cursor ? { cursor: request.query.cursor } : {}),
  });

  app.post<{ Params: { id: string } }>('/webhooks/:id', {
    config: PAGE,
    schema: { hide: true, params: hookParams },
    handler: async (request, reply) => {
      const { id } = request.params;
      const form = readForm(request, d);
      const refused = (problems: FieldProblem[], message?: string) => detailPage(d, request, reply, id, { form, problems, status: 400, ...(message ? { message } : {}) });
      // An id of another account is a 404 whatever the form holds.
      await getWebhook(d.ctx, d.user(request).accountId, id);
      const problems = formProblems(d, form);
      if (problems.length) return refused(problems);
      const patch: WebhookPatch = { url: form.url, events: form.events as EventType[], active: form.active };
      if (form.secret) patch.secret = form.secret;
      else if (form.removeSecret) patch.secret = null;
      try {
        await updateWebhook(d.ctx, d.user(request).accountId, id, patch);
      } catch (err) {
        if (err instanceof InvalidInput) return refused(err.details ?? [], err.message);
        throw err;
      }
      return d.redirect(reply, `/webhooks/${id}`, 'Webhook saved.');
    },
  });

  app.post<{ Params: { id: string } }>('/webhooks/:id/delete', {
    config: PAGE,
    schema: { hide: true, params: hookParams },
    handler: async (request, reply) => {
      const { id } = request.params;
      const { accountId, userId } = d.user(request);
      // A tab left open on a webhook deleted meanwhile (or an id that never was this account's).
      const hook = await getWebhook(d.ctx, accountId, id).catch((err: unknown) => {
        if (err instanceof NotFound) return null;
        throw err;
      });
      if (!hook) return d.redirect(reply, '/webhooks', 'That webhook does not exist (any more): it was deleted, perhaps in another tab.', true);
      if (d.form(request).one('confirmed') !== 'yes') {
        return d.send(request, reply, {
          title: 'Delete the webhook?',
          section: 'webhooks',
          body: confirmation({
            question: `Delete the webhook ${hook.url}?`,
            consequence: 'Nothing is sent to it from then on, and its deliveries and their history are deleted with it. This cannot be undone.',
            action: `${d.base}/webhooks/${id}/delete`,
            button: 'Delete the webhook',
            cancel: `${d.base}/webhooks/${id}`,
          }),
        });
      }
      await deleteWebhook(d.ctx, accountId, id);
      request.log.info({ user: userId, webhook: id }, 'dashboard webhook deleted');
      return d.redirect(reply, '/webhooks', `The webhook ${hook.url} is deleted.`);
    },
  });

  app.post<{ Params: { id: string; deliveryId: string } }>('/webhooks/:id/deliveries/:deliveryId/redeliver', {
    config: PAGE,
    schema: { hide: true, params: deliveryParams },
    handler: async (request, reply) => {
      const { id, deliveryId } = request.params;
      try {
        await redeliver(d.ctx, d.user(request).accountId, id, deliveryId);
      } catch (err) {
        // The webhook was deactivated since the page was shown: say so on its page.
        if (err instanceof Conflict) return detailPage(d, request, reply, id, { status: 409, message: 'The webhook is inactive: activate it (tick Active and save) to send deliveries again.' });
        throw err;
      }
      return d.redirect(reply, `/webhooks/${id}`, 'The delivery is sent again shortly.');
    },
  });
}
