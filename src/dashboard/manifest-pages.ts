// The dashboard's end of day (§14, §15): the account's manifests with their documents, and "Close
// the day" for a carrier: every active label of that carrier on no manifest yet goes onto one new
// manifest (createManifest without labelIds, as `POST /v1/manifests {carrier}` does), or, when those
// labels are sent from several places, each place's onto its own, one button a place.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CARRIERS, type Carrier } from '../carriers/services.ts';
import { AppError, type FieldProblem } from '../errors.ts';
import { createManifest, listManifests, placesWaitingForManifest, type Manifest, type SenderPlace } from '../manifests/service.ts';
import { actionButton, confirmation, csrfField, errorSummary, field, fieldErrors, formKeyField, formKeyOf, html, olderLink, table, time } from './html.ts';
import { onceForForm, type FormSending } from '../http/idempotency.ts';
import { pageOf } from '../http/pagination.ts';
import { PAGE, sentAgain, type Dashboard } from './routes.ts';

const PER_PAGE = 25;

const counted = (n: number) => `${n} ${n === 1 ? 'label' : 'labels'}`;
/** `1 label of UPS waits`, `2 labels of UPS wait`. */
const waitingOf = (n: number, carrier: string) => `${counted(n)} of ${carrier} ${n === 1 ? 'waits' : 'wait'}`;
/** What every page that asks first says of the labels it counts. */
const WAITING = 'every active one on no manifest yet; returns’ labels are left out, the customer hands those to the carrier';

export function manifestPages(app: FastifyInstance, d: Dashboard): void {
  const { ctx, base } = d;

  const download = (m: Manifest) =>
    Date.parse(m.expiresAt) > Date.now()
      ? html`<a href="${m.url}">Download ${m.number} (PDF)</a>`
      : html`Link expired ${time(m.expiresAt)}`;

  const listPage = async (request: FastifyRequest, reply: FastifyReply, o: { status?: number; carrier?: string; formErrors?: FieldProblem[]; message?: string; formKey?: string } = {}) => {
    const cursor = (request.query as { cursor?: string } | undefined)?.cursor;
    const page = pageOf({ limit: PER_PAGE, ...(cursor ? { cursor } : {}) });
    const rows = await listManifests(ctx, d.user(request).accountId, page);
    const manifests = rows.slice(0, PER_PAGE);
    const errors = fieldErrors(o.formErrors);
    return d.send(request, reply, {
      title: o.status ? 'Manifests: the day was not closed' : 'Manifests',
      section: 'manifests',
      status: o.status ?? 200,
      body: (token) => html`<h1>Manifests</h1>
${errorSummary(o.formErrors, o.message, new Map([['carrier', 'Carrier']]))}
<section aria-labelledby="close-heading">
<h2 id="close-heading">Close the day</h2>
<p>Puts every active label of the carrier that is on no manifest yet onto one manifest (returns’ labels are left out: the customer hands those to the carrier): the form the carrier’s driver scans instead of each parcel (for USPS, the SCAN form). A manifest stands for one place’s parcels: when the labels are sent from several places (two warehouses), each place gets its own. The next page says how many labels that is, and from where, before anything is done. A label on a manifest can no longer be invalidated.</p>
<form method="post" action="${base}/manifests">
${csrfField(token)}
${formKeyField(formKeyOf(o.formKey))}
${field({ label: 'Carrier', name: 'carrier', value: o.carrier ?? '', options: [['', 'Choose a carrier'] as const, ...CARRIERS.map((c) => [c, c] as const)], required: true, errors })}
<button type="submit">Close the day</button>
</form>
</section>
<section aria-labelledby="list-heading">
<h2 id="list-heading">Your manifests</h2>
<p class="hint">Each document can be downloaded for 24 hours after the manifest was made.</p>
${table(
  'Manifests, newest first',
  ['Number', 'Carrier', 'Labels', 'Created', 'Document'],
  manifests.map((m) => [html`<code id="manifest-${m.number}">${m.number}</code>`, html`${m.carrier}`, html`${m.labelCount}`, time(m.createdAt), download(m)]),
  cursor ? 'No older manifests.' : 'No manifests yet: close the day for a carrier above.',
)}
${olderLink(`${base}/manifests`, {}, page, rows, 'Older manifests')}${cursor ? html`<p><a href="${base}/manifests">Newest manifests</a></p>` : ''}
</section>`,
    });
  };

  app.get<{ Querystring: { cursor?: string } }>('/manifests', {
    config: PAGE,
    schema: { hide: true, querystring: { type: 'object', properties: { cursor: { type: 'string', maxLength: 200 } } } },
    handler: async (request, reply) => listPage(request, reply),
  });

  app.post('/manifests', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => {
      const carrier = d.form(request).one('carrier').trim();
      // The form's key (onceForForm) goes through the page that asks first, to its button.
      const formKey = formKeyOf(d.form(request).one('formKey'));
      if (!(CARRIERS as readonly string[]).includes(carrier)) {
        // No carrier is chosen for the user: closing the day cannot be undone.
        const message = carrier === '' ? 'choose the carrier whose day to close' : `must be one of ${CARRIERS.join(', ')}`;
        return listPage(request, reply, { status: 400, carrier, formErrors: [{ field: 'carrier', message }], formKey });
      }
      const { accountId } = d.user(request);
      // A place's button (when the labels are sent from several places): that place's key, as the service made it.
      const place = d.form(request).one('place') || undefined;
      // Labels sent from several places: one manifest a place, each with its button (the form's key rides along).
      const choosePlace = (places: SenderPlace[], changed: boolean) => {
        const total = places.reduce((n, p) => n + p.labels.length, 0);
        return d.send(request, reply, {
          title: `Close the day for ${carrier}?`,
          section: 'manifests',
          body: (token) => html`<h1>Close the day for ${carrier}?</h1>
<p>${changed ? 'Nothing was done yet: since this page was shown, labels from more than one place have come to wait. ' : ''}${waitingOf(total, carrier)} for a manifest now (${WAITING}), sent from ${places.length} places. A manifest stands for the parcels on one truck, so each place’s day is closed on a manifest of its own: press the button of each place whose parcels the driver takes. Each manifest takes the labels waiting at its place when its button is pressed. Labels on a manifest can no longer be invalidated, and a manifest cannot be undone.</p>
${places.map((p, i) => html`<section aria-labelledby="place-${i + 1}">
<h2 id="place-${i + 1}">${p.name}</h2>
<p>${counted(p.labels.length)} of ${carrier} sent from here.</p>
<div class="actions">${actionButton(`${base}/manifests`, `Close the day for ${carrier} at ${p.name}`, token, { carrier, formKey, place: p.key, confirmed: 'yes' }, true)}</div>
</section>`)}
<p><a href="${base}/manifests">Cancel</a></p>`,
        });
      };
      // Closing the day cannot be undone: first how many labels it would take, and a button that does it.
      if (d.form(request).one('confirmed') !== 'yes') {
        const places = await placesWaitingForManifest(ctx, accountId, carrier as Carrier);
        if (places.length > 1) return choosePlace(places, false);
        const waiting = places[0]?.labels.length ?? 0;
        if (waiting > 0) {
          return d.send(request, reply, {
            title: `Close the day for ${carrier}?`,
            section: 'manifests',
            body: confirmation({
              question: `Close the day for ${carrier}?`,
              consequence: `${waitingOf(waiting, carrier)} for a manifest now (${WAITING}), all sent from ${places[0]!.name}. The manifest takes those waiting when the button is pressed, for the driver to scan. Labels on a manifest can no longer be invalidated, and the manifest cannot be undone.`,
              action: `${base}/manifests`,
              button: `Close the day for ${carrier}`,
              cancel: `${base}/manifests`,
              // The place it names: pressed after another place's labels came to wait, it still closes this one's day.
              hidden: { carrier, formKey, place: places[0]!.key },
            }),
          });
        }
      }
      // The same form sent again (a double click on the button, Back and submit) makes no second
      // manifest, and is not told that nothing waits: it is led to the manifest the first made (its
      // row in the list, by its number). A place's button asks for that place: another place's button
      // with the same key (Back, then the next place) is another manifest.
      let manifest: Manifest | undefined;
      let sending: FormSending;
      try {
        sending = await onceForForm(ctx, accountId, formKey, place === undefined ? { carrier } : { carrier, place }, async () => {
          manifest = await createManifest(ctx, accountId, { carrier: carrier as Carrier }, place);
          return `/manifests#manifest-${manifest.number}`;
        });
      } catch (err) {
        // Labels from several places came to wait after the page that asked: that page again, with a button a place.
        if (err instanceof AppError && err.code === 'MIXED_SENDERS' && place === undefined) {
          const places = await placesWaitingForManifest(ctx, accountId, carrier as Carrier);
          if (places.length > 1) return choosePlace(places, true);
        }
        // Nothing to manifest (422) and the like: the service's message, with its status, on this page.
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return listPage(request, reply, { status: err.status, carrier, formErrors: err.details, message: err.message, formKey });
      }
      if (sending.again) {
        const number = sending.answer?.split('#manifest-')[1];
        return sentAgain(d, reply, sending, { made: number ? `manifest ${number}` : 'manifest', list: '/manifests' });
      }
      let notice = `Manifest ${manifest!.number} was made for ${manifest!.carrier} with ${counted(manifest!.labelCount)}.`;
      if (place !== undefined) {
        // Labels that came to wait at this place meanwhile are not another place's.
        const others = (await placesWaitingForManifest(ctx, accountId, carrier as Carrier)).filter((p) => p.key !== place).length;
        if (others > 0) notice += ` Labels of ${carrier} sent from ${others} other ${others === 1 ? 'place' : 'places'} still wait: close the day for ${carrier} again for ${others === 1 ? 'it' : 'them'}.`;
      }
      return d.redirect(reply, '/manifests', notice);
    },
  });
}
