// The dashboard's end of day (§14, §15): "Close the day" for a carrier makes a manifest of its waiting
// labels, the list links to its document, labels sent from two places are closed place by place,
// nothing left to manifest is the service's refusal on the page, and the form needs its token; on
// both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { countRows, forEachDatabase, sampleShipment, withTestApp, type TestApp } from '../helpers.ts';
import { signedIn, noticeOf } from './support.ts';

async function labelsOf(t: TestApp, apiKey: string, n: number, shipment: object = sampleShipment): Promise<{ id: string; trackingNumber: string }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const s = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': apiKey }, payload: shipment });
    assert.equal(s.statusCode, 201, s.body);
    const label = await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': apiKey }, payload: { shipmentId: s.json().id } });
    assert.equal(label.statusCode, 201, label.body);
    out.push(label.json());
  }
  return out;
}

async function countManifests(t: TestApp, apiKey: string): Promise<number> {
  return (await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': apiKey } })).json().length;
}

function textOf(res: LightMyRequestResponse): string {
  return res.body.replace(/<[^>]+>/g, ' ').replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c))).replace(/\s+/g, ' ');
}

const decodeEntities = (s: string) => s.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c)));
/** A UPS parcel from the warehouse in Memphis to Berlin; sampleShipment's goes from Berlin to New York. */
const MEMPHIS = { ...sampleShipment, from: { name: 'Acme Warehouse', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' }, to: sampleShipment.from };
const USPS = { ...sampleShipment, customs: undefined, carrier: 'USPS', service: 'priority_mail', from: { name: 'Lager Süd Inc', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' } };

forEachDatabase((database) => {
  describe('dashboard manifests', () => {
    const t = withTestApp(database);

    it('closes the day for a carrier: a manifest of its waiting labels, listed with its document', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const ups = await labelsOf(t, acct.apiKey, 2);
      const usps = await labelsOf(t, acct.apiKey, 1, USPS);

      const empty = await v.get('/dashboard/manifests');
      assert.equal(empty.statusCode, 200);
      assert.equal(empty.body.match(/<h1[\s>]/g)?.length, 1);
      assert.match(empty.body, /No manifests yet/);
      assert.match(empty.body, /<form method="post" action="\/dashboard\/manifests">/);
      assert.match(empty.body, /<label for="f-carrier">Carrier<\/label><select id="f-carrier" name="carrier" required><option value="" selected>Choose a carrier<\/option>/);
      // No carrier is chosen for the user: the form as it comes is refused, and nothing is made.
      const unchosen = await v.post('/dashboard/manifests', { carrier: '' }, '/dashboard/manifests');
      assert.equal(unchosen.statusCode, 400);
      assert.match(textOf(unchosen), /choose the carrier whose day to close/);
      assert.match(empty.body, /<button type="submit">Close the day<\/button>/);

      // It asks first, saying how many labels the manifest would take; nothing is made until its button.
      const asked = await v.post('/dashboard/manifests', { carrier: 'UPS' }, '/dashboard/manifests');
      assert.equal(asked.statusCode, 200, textOf(asked).slice(0, 1000));
      assert.match(textOf(asked), /Close the day for UPS\? 2 labels of UPS wait for a manifest now \(every active one on no manifest yet; returns’ labels are left out/);
      assert.match(asked.body, /<input type="hidden" name="carrier" value="UPS"><input type="hidden" name="formKey" value="[0-9a-f-]{36}"><input type="hidden" name="place" value="[^"]+"><input type="hidden" name="confirmed" value="yes"><button type="submit" class="danger">Close the day for UPS<\/button>/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json().length, 0);
      const closed = await v.post('/dashboard/manifests', { carrier: 'UPS', confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(closed.statusCode, 303, textOf(closed).slice(0, 1000));
      const location = String(closed.headers.location);
      assert.equal(location, '/dashboard/manifests');
      const notice = noticeOf(closed)!;
      assert.match(notice, /^Manifest UPSM\d{10} was made for UPS with 2 labels\.$/);
      const number = /UPSM\d{10}/.exec(notice)![0];


      const list = await v.get(location);
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /<p class="notice" role="status"[^>]*>Manifest UPSM\d{10} was made/);
      assert.match(list.body, /<caption>Manifests, newest first<\/caption>/);
      assert.ok(!/<th(?=[\s>])(?! scope="col")/.test(list.body), 'every column header has scope=col');
      assert.match(textOf(list), new RegExp(`${number} UPS 2 \\d{4}-\\d\\d-\\d\\d`));
      const href = new RegExp(`<a href="([^"]+)">Download ${number} \\(PDF\\)</a>`).exec(list.body)?.[1];
      assert.ok(href, 'a download link');
      const link = new URL(decodeEntities(href));
      assert.equal(link.origin, 'http://localhost:8080');
      assert.match(link.pathname, /^\/v1\/downloads\/manifests\/[0-9a-f-]{36}$/);
      const pdf = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.rawPayload.subarray(0, 4).toString('latin1'), '%PDF');

      // The API sees the same manifest: the UPS labels, not the USPS one.
      const api = (await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(api.length, 1);
      assert.equal(api[0].number, number);
      assert.deepEqual(new Set(api[0].labelIds), new Set(ups.map((l) => l.id)));
      assert.ok(!api[0].labelIds.includes(usps[0]!.id));
      // One label waiting is said in the singular.
      assert.match(textOf(await v.post('/dashboard/manifests', { carrier: 'USPS' }, '/dashboard/manifests')), /Close the day for USPS\? 1 label of USPS waits for a manifest now \(/);

      // A label on the manifest: its shipment's page says so instead of offering to invalidate it.
      const shipmentOf = (label: object) => (label as { shipmentId: string }).shipmentId;
      const onManifest = await v.get(`/dashboard/shipments/${shipmentOf(ups[0]!)}`);
      assert.equal(onManifest.statusCode, 200);
      assert.match(textOf(onManifest), new RegExp(`On manifest ${number}: the carrier has it, so it can no longer be invalidated`));
      assert.ok(!onManifest.body.includes('Invalidate label'));
      assert.ok((await v.get(`/dashboard/shipments/${shipmentOf(usps[0]!)}`)).body.includes('Invalidate label'), 'a label on no manifest still can be');

      // Nothing left for UPS: the service's message with its status, on the page, the carrier kept.
      const again = await v.post('/dashboard/manifests', { carrier: 'UPS' }, '/dashboard/manifests');
      assert.equal(again.statusCode, 422);
      assert.match(textOf(again), /no active UPS label of this account is waiting for a manifest/);
      assert.match(again.body, /<option value="UPS" selected>/);
      assert.match(again.body, /id="error-summary"/);
      assert.match(textOf(again), new RegExp(number), 'the list is still shown');

      const unknown = await v.post('/dashboard/manifests', { carrier: 'TNT' }, '/dashboard/manifests');
      assert.equal(unknown.statusCode, 400);
      assert.match(textOf(unknown), /Carrier: must be one of UPS, USPS, FedEx, DHL/);

      // USPS: its own manifest, a SCAN form number.
      const scan = await v.post('/dashboard/manifests', { carrier: 'USPS', confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(scan.statusCode, 303);
      assert.match(noticeOf(scan)!, /^Manifest 9475\d{18} was made for USPS with 1 label\.$/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json().length, 2);
    });

    it('the same form sent again (two at once, or again later) makes no second manifest and leads to the one the first made', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      await labelsOf(t, acct.apiKey, 2);
      const keyOf = (body: string) => /<input type="hidden" name="formKey" value="([0-9a-f-]{36})">/.exec(body)?.[1];
      const formKey = keyOf((await v.get('/dashboard/manifests')).body);
      assert.ok(formKey, 'the form carries a key of its own');
      assert.notEqual(keyOf((await v.get('/dashboard/manifests')).body), formKey, 'a new one each time it is shown');
      // The page that asks first carries the key to its button.
      const asked = await v.post('/dashboard/manifests', { carrier: 'UPS', formKey }, '/dashboard/manifests');
      assert.equal(asked.statusCode, 200);
      assert.equal(keyOf(asked.body), formKey);
      // Its button pressed twice at once: one manifest; both answers lead to it, neither says nothing waits.
      const both = await Promise.all([0, 1].map(() => v.post('/dashboard/manifests', { carrier: 'UPS', formKey, confirmed: 'yes' }, '/dashboard/manifests')));
      assert.deepEqual(both.map((r) => r.statusCode), [303, 303], textOf(both[1]!).slice(0, 500));
      const manifests = (await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(manifests.length, 1);
      const number = manifests[0].number;
      const answers = both.map((r) => [r.headers.location, noticeOf(r)]).sort((a, b) => String(a[0]).length - String(b[0]).length);
      assert.deepEqual(answers, [
        ['/dashboard/manifests', `Manifest ${number} was made for UPS with 2 labels.`],
        [`/dashboard/manifests#manifest-${number}`, `This form was already sent: this is the manifest ${number} it made. Nothing new was created.`],
      ]);
      // Back and submit, later: the same, and still one manifest.
      const later = await v.post('/dashboard/manifests', { carrier: 'UPS', formKey, confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(later.statusCode, 303);
      assert.equal(later.headers.location, `/dashboard/manifests#manifest-${number}`);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json().length, 1);
      // That address names the manifest's row in the list.
      assert.ok((await v.get('/dashboard/manifests')).body.includes(`<code id="manifest-${number}">${number}</code>`));
      // Back, another carrier chosen with the same key: another action, carried out (the FedEx day is closed).
      await labelsOf(t, acct.apiKey, 1, { ...sampleShipment, carrier: 'FedEx', service: 'international_priority' });
      const fedex = await v.post('/dashboard/manifests', { carrier: 'FedEx', formKey, confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(fedex.statusCode, 303);
      assert.match(noticeOf(fedex) ?? '', /^Manifest FDXM\d{10} was made for FedEx with 1 label\.$/);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json().length, 2);
      // A refusal keeps nothing for the key: the form comes back with it.
      const nothing = await v.post('/dashboard/manifests', { carrier: 'DHL', formKey: keyOf((await v.get('/dashboard/manifests')).body)!, confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(nothing.statusCode, 422);
    });

    it('labels sent from two places: the page that asks first groups them by place, one button a place, each making that place\'s manifest once', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const memphis = await labelsOf(t, acct.apiKey, 3, MEMPHIS);
      const berlin = await labelsOf(t, acct.apiKey, 1);
      const manifests = async () => (await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json() as { number: string; labelIds: string[] }[];
      const keyOf = (body: string) => /<input type="hidden" name="formKey" value="([0-9a-f-]{36})">/.exec(body)?.[1];
      const formKey = keyOf((await v.get('/dashboard/manifests')).body)!;

      const asked = await v.post('/dashboard/manifests', { carrier: 'UPS', formKey }, '/dashboard/manifests');
      assert.equal(asked.statusCode, 200, textOf(asked).slice(0, 1000));
      assert.equal(asked.body.match(/<h1[\s>]/g)?.length, 1);
      assert.match(textOf(asked), /Close the day for UPS\? 4 labels of UPS wait for a manifest now \(every active one on no manifest yet; returns’ labels are left out, the customer hands those to the carrier\), sent from 2 places\. A manifest stands for the parcels on one truck/);
      // One section a place, in the order of its first label, with its count and its button.
      const places = [...asked.body.matchAll(/<section aria-labelledby="place-\d">\s*<h2 id="place-\d">([^<]+)<\/h2>\s*<p>([^<]+)<\/p>[\s\S]*?<\/section>/g)];
      assert.deepEqual(places.map((m) => [m[1], m[2]]), [
        ['4100 Distribution Dr, Memphis, TN 38118, US', '3 labels of UPS sent from here.'],
        ['Hauptstraße 5, Berlin, 10115, DE', '1 label of UPS sent from here.'],
      ]);
      const buttons = [...asked.body.matchAll(/<form method="post" action="\/dashboard\/manifests" class="inline">([\s\S]*?)<\/form>/g)].map((m) => {
        const hidden = Object.fromEntries([...m[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((h) => [h[1], decodeEntities(h[2]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&'))]));
        return { hidden, button: /<button[^>]*>([^<]+)<\/button>/.exec(m[1]!)![1] };
      });
      assert.deepEqual(buttons.map((b) => b.button), ['Close the day for UPS at 4100 Distribution Dr, Memphis, TN 38118, US', 'Close the day for UPS at Hauptstraße 5, Berlin, 10115, DE']);
      for (const b of buttons) assert.deepEqual([b.hidden.carrier, b.hidden.formKey, b.hidden.confirmed], ['UPS', formKey, 'yes'], 'the form\'s key rides to each button');
      assert.equal((await manifests()).length, 0, 'nothing is made until a button is pressed');
      const press = (b: (typeof buttons)[number]) => v.post('/dashboard/manifests', { carrier: b.hidden.carrier!, formKey: b.hidden.formKey!, place: b.hidden.place!, confirmed: 'yes' }, '/dashboard/manifests');

      // Memphis's button, pressed twice at once: one manifest of Memphis's labels; the notice says Berlin's still wait.
      const both = await Promise.all([press(buttons[0]!), press(buttons[0]!)]);
      assert.deepEqual(both.map((r) => r.statusCode), [303, 303], textOf(both[1]!).slice(0, 500));
      let made = await manifests();
      assert.equal(made.length, 1);
      assert.deepEqual(new Set(made[0]!.labelIds), new Set(memphis.map((l) => l.id)));
      const notices = both.map((r) => noticeOf(r)).sort();
      assert.deepEqual(notices, [
        `Manifest ${made[0]!.number} was made for UPS with 3 labels. Labels of UPS sent from 1 other place still wait: close the day for UPS again for it.`,
        `This form was already sent: this is the manifest ${made[0]!.number} it made. Nothing new was created.`,
      ]);
      // Back, then Berlin's button with the same key: another place, another manifest.
      const second = await press(buttons[1]!);
      assert.equal(second.statusCode, 303);
      made = await manifests();
      assert.equal(made.length, 2);
      assert.deepEqual(made[0]!.labelIds, [berlin[0]!.id]);
      assert.equal(noticeOf(second), `Manifest ${made[0]!.number} was made for UPS with 1 label.`);
      // Nothing waits now: the form as it comes is told so.
      assert.equal((await v.post('/dashboard/manifests', { carrier: 'UPS' }, '/dashboard/manifests')).statusCode, 422);
    });

    it('one place: the page that asks first names it, and its button closes that place\'s day, even once labels from a second place wait, or nothing when that place has none left', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const memphis = await labelsOf(t, acct.apiKey, 2, MEMPHIS);
      const ask = async () => {
        const asked = await v.post('/dashboard/manifests', { carrier: 'UPS' }, '/dashboard/manifests');
        assert.equal(asked.statusCode, 200);
        return asked;
      };
      const asked = await ask();
      assert.match(textOf(asked), /2 labels of UPS wait for a manifest now \([^)]*\), all sent from 4100 Distribution Dr, Memphis, TN 38118, US\./);
      const field = (body: string, name: string) => decodeEntities(new RegExp(`name="${name}" value="([^"]+)"`).exec(body)![1]!);
      const formKey = field(asked.body, 'formKey');
      const place = field(asked.body, 'place');
      // A Berlin label comes to wait before the button is pressed: the button still closes Memphis's day, and says Berlin's waits.
      const berlin = await labelsOf(t, acct.apiKey, 1);
      const pressed = await v.post('/dashboard/manifests', { carrier: 'UPS', formKey, place, confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(pressed.statusCode, 303, textOf(pressed).slice(0, 600));
      const made = (await t.app.inject({ method: 'GET', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey } })).json();
      assert.deepEqual(new Set(made[0].labelIds), new Set(memphis.map((l) => l.id)));
      assert.equal(noticeOf(pressed), `Manifest ${made[0].number} was made for UPS with 2 labels. Labels of UPS sent from 1 other place still wait: close the day for UPS again for it.`);
      // Memphis's day closed elsewhere meanwhile (the API), a page naming Memphis pressed later makes nothing of Berlin's labels.
      await labelsOf(t, acct.apiKey, 1, MEMPHIS);
      const again = await ask();
      const secondKey = field(again.body, 'formKey');
      assert.equal((await t.app.inject({ method: 'POST', url: '/v1/manifests', headers: { 'x-api-key': acct.apiKey }, payload: { carrier: 'UPS', fromPostalCode: '38118' } })).statusCode, 201);
      const late = await v.post('/dashboard/manifests', { carrier: 'UPS', formKey: secondKey, place, confirmed: 'yes' }, '/dashboard/manifests');
      assert.equal(late.statusCode, 422, textOf(late).slice(0, 600));
      assert.match(textOf(late), /no active UPS label of this account is waiting for a manifest from that place/);
      assert.equal(await countManifests(t, acct.apiKey), 2);
      assert.equal((await t.ctx.db.selectFrom('labels').select('manifest_id').where('id', '=', berlin[0]!.id).executeTakeFirstOrThrow()).manifest_id, null, "Berlin's label waits still");
    });

    it("another account's manifests are not listed, and the form needs its token", async () => {
      const mine = await t.newAccount();
      const theirs = await t.newAccount();
      await labelsOf(t, mine.apiKey, 1);
      await labelsOf(t, theirs.apiKey, 1);
      const made = await t.app.inject({ method: 'POST', url: '/v1/manifests', headers: { 'x-api-key': theirs.apiKey }, payload: { carrier: 'UPS' } });
      assert.equal(made.statusCode, 201);
      const v = await signedIn(t, mine.accountId);
      const list = await v.get('/dashboard/manifests');
      assert.ok(!list.body.includes(made.json().number));
      assert.match(list.body, /No manifests yet/);

      const manifests = await countRows(t.ctx, 'manifests');
      const cookie = [...v.cookies].map(([k, val]) => `${k}=${val}`).join('; ');
      const noToken = await t.app.inject({ method: 'POST', url: '/dashboard/manifests', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'carrier=UPS' });
      assert.equal(noToken.statusCode, 403);
      assert.match(noToken.body, /without its security token/);
      assert.equal((await v.post('/dashboard/manifests', { _csrf: 'forged', carrier: 'UPS' })).statusCode, 403);
      assert.equal(await countRows(t.ctx, 'manifests'), manifests, 'nothing was manifested');
    });
  });
});
