// The dashboard in a real browser (Debian's Chromium driven by Playwright) against a listening server:
// a warehouse user's day from sign-in to sign-out. Every page is checked for console errors, requests
// to other origins, and axe-core's serious or critical accessibility violations.
// UPDATE_SCREENSHOTS=1 writes the screenshots of docs/dashboard.md (SQLite run only).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { forEachDatabase, sampleShipment, startTestApp, type TestApp } from '../helpers.ts';
import { createUser } from '../../src/oauth/users.ts';
import { startWorker, type Worker } from '../../src/worker.ts';
import { freePort } from '../core/support.ts';
import { PASSWORD } from './support.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const DOCS = new URL('../../docs/dashboard/', import.meta.url);
const screenshots = process.env.UPDATE_SCREENSHOTS === '1';

let browser: Browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
});
after(async () => browser?.close());

/** A field's label, whether or not it is marked optional (or required only when: "(required with a declaration)"). */
function label(text: string): RegExp {
  return new RegExp(`^${text.replace(/[()]/g, '\\$&')}( \\((optional|required [^)]+)\\))?$`);
}

/** A webhook receiver on loopback that answers 200 and remembers what it got. */
async function receiver(): Promise<{ server: Server; url: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

forEachDatabase((database) => {
  describe(`the dashboard in Chromium (${database.name})`, () => {
    let t: TestApp;
    let base: string;
    let worker: Worker;
    let context: BrowserContext;
    let page: Page;
    let hooks: Awaited<ReturnType<typeof receiver>>;
    const email = `packer-${database.name}@example.com`;
    /** Console errors, failed page scripts and requests to any other origin, over the whole session. */
    const problems: string[] = [];

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      // The sandbox carrier takes no step while the test runs: a label it had scanned could not be invalidated.
      t = await startTestApp(database, { PUBLIC_BASE_URL: base, PORT: String(port), SANDBOX_STEP_SECONDS: '3600' });
      await t.app.listen({ host: '127.0.0.1', port });
      worker = startWorker(t.ctx);
      hooks = await receiver();
      await createUser(t.ctx.db, t.accountId, email, PASSWORD);
      // A phone-sized window: the pages must work there too.
      // A warehouse in Chicago: its times are shown in its zone.
      context = await browser.newContext({ locale: 'en-US', timezoneId: 'America/Chicago', viewport: { width: 412, height: 915 }, acceptDownloads: true });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      page.on('console', (m) => {
        // A refused form or a foreign id is a 4xx page on purpose; Chromium logs each such answer.
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
      });
      // ...so every answer of 400 or more is looked at here: only pages may be refused, never a stylesheet, script or image.
      page.on('response', (r) => {
        if (r.status() >= 400 && r.request().resourceType() !== 'document') problems.push(`${r.status()} for ${r.request().resourceType()} ${r.url()}`);
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('request', (r) => {
        const url = new URL(r.url());
        // Chromium's own PDF viewer (chrome:, chrome-extension:) is the browser, not a request to anyone.
        if (!['chrome:', 'chrome-extension:'].includes(url.protocol) && url.origin !== base) problems.push(`request to another origin: ${r.url()}`);
      });
    });
    after(async () => {
      await context?.close();
      await worker?.stop();
      await new Promise<void>((resolve) => hooks.server.close(() => resolve()));
      await t.close();
    });

    /** axe-core on the page as it is now, with WCAG 2.2's rules and axe's best practices: no moderate, serious or critical violation. */
    async function accessible(name: string): Promise<void> {
      await page.evaluate(AXE_SOURCE);
      const result = await page.evaluate(async () => {
        const axe = (globalThis as unknown as { axe: { run(options: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } }).axe;
        const r = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
        return r.violations.filter((v) => v.impact === 'moderate' || v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`);
      });
      assert.deepEqual(result, [], `axe on ${name}`);
      // Reflow (WCAG 1.4.10): on a 375 px phone nothing scrolls sideways.
      await page.setViewportSize({ width: 375, height: 800 });
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      await page.setViewportSize({ width: 412, height: 915 });
      assert.ok(wide <= 375, `${name} is ${wide} px wide on a 375 px screen`);
      if (screenshots && database.name === 'sqlite') {
        if (name === 'shipments' || name === 'shipment') await page.screenshot({ path: new URL(`${name}-phone.png`, DOCS).pathname, fullPage: false });
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.screenshot({ path: new URL(`${name}.png`, DOCS).pathname, fullPage: true });
        await page.setViewportSize({ width: 412, height: 915 });
      }
    }

    it('sends a visitor without a session to the sign-in page, and back where they were going after it', async () => {
      const response = await page.goto(`${base}/dashboard/shipments?status=created`);
      assert.equal(response?.status(), 200);
      assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in');
      await accessible('sign-in');
      await page.getByLabel(label('Email address')).fill(email);
      await page.getByLabel(label('Password')).fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /email address or password is not correct/);
      await page.getByLabel(label('Password')).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Shipments' }).waitFor();
      assert.equal(new URL(page.url()).search, '?status=created');
      const cookies = await context.cookies(`${base}/dashboard/shipments`);
      const session = cookies.find((c) => c.name === 'dashboard_session')!;
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Lax');
      assert.equal(session.path, '/dashboard');
    });

    let webhookUrl: string;

    it('adds a webhook for new shipments', async () => {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await page.getByLabel(label('URL')).fill(hooks.url);
      await page.getByRole('checkbox', { name: 'shipment.created' }).check();
      await page.getByRole('button', { name: 'Add the webhook' }).click();
      await page.getByRole('heading', { level: 1, name: `Webhook ${hooks.url}` }).waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', /Webhook added/);
      webhookUrl = page.url().split('?')[0]!;
      await accessible('webhook');
    });

    let shipmentUrl: string;
    let trackingNumber: string;

    it('creates a shipment and its label through the form, the API\'s messages beside the fields first', async () => {
      await page.getByRole('link', { name: 'New shipment' }).click();
      await page.getByRole('heading', { level: 1, name: 'New shipment and label' }).waitFor();
      await accessible('new-shipment');
      // Sent empty: every problem in the summary, each link a target large enough to tap, each field named once.
      await page.getByRole('button', { name: 'Create shipment and label' }).click();
      await page.locator('#error-summary').waitFor();
      const summary = (await page.locator('#error-summary li').allTextContents()).map((l) => l.trim());
      // An address left empty: each of its required fields (the API names only the address).
      const required = (legend: string) => ['Name', 'Street', 'City', 'Country'].map((f) => `${f}, ${legend}: is required`);
      assert.deepEqual(summary, ['Carrier: is required', 'Service: is required', ...required('From (sender)'), ...required('To (recipient)'), 'Weight: is required']);
      // A link focuses its field, within its group.
      await page.locator('#error-summary').getByRole('link', { name: 'Street, From (sender): is required' }).click();
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'f-from-street1');
      assert.equal(await page.evaluate(() => document.activeElement?.closest('fieldset')?.querySelector('legend')?.textContent?.trim()), 'From (sender)');
      await accessible('new-shipment-empty');
      const s = sampleShipment as unknown as { from: Record<string, string>; to: Record<string, string>; customs: { contentsType: string; signer: string; items: Record<string, any>[] } };
      await page.getByLabel(label('Carrier')).selectOption('UPS');
      await page.getByLabel(label('Service')).selectOption('worldwide_saver');
      await page.getByLabel(label('Reference')).fill('Order 4711');
      for (const [side, legend] of [['from', 'From (sender)'], ['to', 'To (recipient)']] as const) {
        const group = page.getByRole('group', { name: legend });
        for (const [key, name] of [['name', 'Name'], ['street1', 'Street'], ['city', 'City'], ['state', 'State or province'], ['postalCode', 'Postal code'], ['country', 'Country']] as const) {
          if (s[side][key]) await group.getByLabel(label(name)).fill(s[side][key]!);
        }
      }
      await page.getByLabel(label('Weight')).fill('1.2');
      // Berlin to New York crosses a customs border: leave the declaration out first.
      await page.getByRole('button', { name: 'Create shipment and label' }).click();
      await page.locator('#error-summary').waitFor();
      const message = page.locator('#f-customs-error');
      assert.match((await message.textContent()) ?? '', /is required: the parcel crosses a customs border/);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'error-summary', 'the summary takes the focus');
      await accessible('new-shipment-problems');

      const item = s.customs.items[0]!;
      await page.getByLabel(label('Contents')).selectOption(s.customs.contentsType);
      await page.getByLabel(label('Signed by')).fill(s.customs.signer);
      const line = page.getByRole('group', { name: 'Contents line 1' });
      await line.getByLabel(label('Item description')).fill(item.description);
      await line.getByLabel(label('Quantity')).fill(String(item.quantity));
      await line.getByLabel(label('Net weight')).fill(String(item.netWeight.value));
      await line.getByLabel(label('Net weight unit')).selectOption(item.netWeight.unit);
      await line.getByLabel(label('Value')).fill(String(item.value.amount));
      await line.getByLabel(label('Currency')).fill(item.value.currency);
      await line.getByLabel(label('HS code')).fill(item.hsCode);
      await line.getByLabel(label('Country of origin')).fill(item.originCountry);
      await page.getByRole('button', { name: 'Create shipment and label' }).click();
      await page.getByRole('heading', { level: 1, name: 'Shipment Order 4711' }).waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', /Shipment created; label \S+ is ready/);
      shipmentUrl = page.url();
      trackingNumber = /label (\S+) is ready/.exec((await page.getByRole('status').textContent())!)![1]!;
    });

    /** Fills the new-shipment form on the page with a FedEx ground parcel from Memphis to San Francisco, and sends it. */
    async function sendDomesticForm(reference: string): Promise<void> {
      await page.getByLabel(label('Carrier')).selectOption('FedEx');
      await page.getByLabel(label('Service')).selectOption('ground');
      await page.getByLabel(label('Reference')).fill(reference);
      for (const [legend, a] of [['From (sender)', { name: 'Lager Süd', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' }], ['To (recipient)', { name: 'Grace Hopper', street1: '1 Market St', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' }]] as const) {
        const group = page.getByRole('group', { name: legend });
        for (const [key, name] of [['name', 'Name'], ['street1', 'Street'], ['city', 'City'], ['state', 'State or province'], ['postalCode', 'Postal code'], ['country', 'Country']] as const) await group.getByLabel(label(name)).fill(a[key]);
      }
      await page.getByLabel(label('Weight')).fill('2');
      await page.getByRole('button', { name: 'Create shipment and label' }).click();
    }

    it("makes nothing twice when the form is sent again after the browser's Back", async () => {
      await page.goto(`${base}/dashboard/shipments/new`);
      await sendDomesticForm('Order 4712');
      await page.getByRole('heading', { level: 1, name: 'Shipment Order 4712' }).waitFor();
      const made = page.url();
      await page.goBack();
      await page.getByRole('button', { name: 'Create shipment and label' }).click();
      await page.getByRole('heading', { level: 1, name: 'Shipment Order 4712' }).waitFor();
      assert.equal(page.url(), made, 'the shipment the form made');
      assert.match((await page.getByRole('status').textContent()) ?? '', /This form was already sent: this is the shipment it made\. Nothing new was created\./);
      await page.goto(`${base}/dashboard/shipments?q=4712`);
      assert.equal(await page.getByRole('link', { name: 'Order 4712' }).count(), 1, 'one shipment');
      // A new form reached again with Back is that new form, not the one sent before: it makes a shipment.
      await page.goto(`${base}/dashboard/shipments/new`);
      await page.goto(`${base}/dashboard/shipments`);
      await page.goBack();
      await sendDomesticForm('Order 4713');
      await page.getByRole('heading', { level: 1, name: 'Shipment Order 4713' }).waitFor();
    });

    it('shows the shipment in the list and finds it by tracking number and by reference', async () => {
      await page.getByRole('link', { name: 'Shipments', exact: true }).click();
      await page.getByRole('link', { name: 'Order 4711' }).waitFor();
      await accessible('shipments');
      const search = page.getByRole('searchbox', { name: 'Tracking number, reference or customer' });
      // One column on a phone: the filters stacked, each as wide as the form.
      await page.setViewportSize({ width: 375, height: 800 });
      const boxes = await Promise.all([search, page.getByLabel(label('Status')), page.getByLabel(label('Carrier'))].map(async (l) => (await l.boundingBox())!));
      await page.setViewportSize({ width: 412, height: 915 });
      for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i]!.y >= boxes[i - 1]!.y + boxes[i - 1]!.height, `filter ${i} below the one before: ${JSON.stringify(boxes)}`);
      await search.fill(trackingNumber.toLowerCase());
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: 'Order 4711' }).waitFor();
      // The recipient's name, in small letters and without its accents.
      await search.fill('ελενη παπαδοπουλου');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: 'Order 4711' }).waitFor();
      await search.fill('no such parcel');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByText('No shipment matches.').waitFor();
      await search.fill('4711');
      await page.getByLabel(label('Carrier')).selectOption('UPS');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('link', { name: 'Order 4711' }).click();
      await page.getByRole('heading', { level: 1, name: 'Shipment Order 4711' }).waitFor();
      // Times in the reader's zone and language, the UTC one kept as the title.
      const created = page.locator('time').first();
      const [text, title, datetime] = [await created.textContent(), await created.getAttribute('title'), await created.getAttribute('datetime')];
      assert.match(title ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      // Chicago's clock (CST in winter, CDT in summer), to the second.
      const chicago = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Chicago', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(datetime!));
      assert.match(text ?? '', /C[SD]T$/, `${text}`);
      assert.ok(text!.replace(/\s/g, ' ').includes(chicago.replace(/\s/g, ' ')), `${text} shows Chicago's time (${chicago})`);
      // The title is out of reach of a keyboard or a finger: the page itself names the zone and its distance from UTC.
      assert.match((await page.locator('#time-zone').textContent()) ?? '', /^Times are in your time zone, America\/Chicago: C[SD]T is UTC\u2212[56] today\.$/);
    });

    it('shows the label preview, and downloads the label as a PDF', async () => {
      const preview = page.getByRole('img', { name: new RegExp(`Label ${trackingNumber}`) });
      await preview.waitFor();
      await page.waitForFunction(() => {
        const img = document.getElementById('label-preview') as HTMLImageElement | null;
        return img?.complete && img.naturalWidth > 0;
      });
      assert.ok(await preview.evaluate((img: HTMLImageElement) => img.naturalWidth >= 800), 'a 4×6 label at 203 dpi');
      await accessible('shipment');
      await page.getByLabel(label('Download format')).selectOption('PDF');
      // The dashboard sends the browser on to the label's signed link; Chromium shows the PDF in its
      // viewer, so the bytes are fetched again through the same link to look at them.
      const [redirect] = await Promise.all([
        page.waitForResponse((r) => r.url().includes('/dashboard/labels/') && r.status() === 303),
        page.getByRole('button', { name: 'Download label' }).click(),
      ]);
      const link = new URL(redirect.headers().location!, base);
      assert.equal(link.origin, base);
      assert.equal(link.searchParams.get('format'), 'PDF');
      const pdf = await context.request.get(link.href);
      assert.equal(pdf.status(), 200);
      assert.equal(pdf.headers()['content-type'], 'application/pdf');
      assert.equal((await pdf.body()).subarray(0, 5).toString(), '%PDF-');
      await page.goto(shipmentUrl);
    });

    it('answers 404 for another account\'s shipment', async () => {
      const other = await t.newAccount();
      const res = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': other.apiKey }, payload: sampleShipment });
      const response = await page.goto(`${base}/dashboard/shipments/${res.json().id}`);
      assert.equal(response?.status(), 404);
      await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      await page.goto(shipmentUrl);
    });

    it('creates a return, then invalidates the original label', async () => {
      await page.getByRole('button', { name: 'Create a return shipment' }).click();
      // The return's page is headed and titled as a return; the original's page lists it.
      await page.getByRole('heading', { level: 1, name: 'Return Order 4711' }).waitFor();
      assert.equal(await page.title(), 'Return Order 4711 · Shipping dashboard');
      assert.match((await page.getByRole('status').textContent()) ?? '', /Return shipment created/);
      assert.ok(await page.getByText('return of').isVisible());
      await page.goto(shipmentUrl);
      assert.equal(await page.title(), 'Shipment Order 4711 · Shipping dashboard');
      assert.ok(await page.getByRole('link', { name: 'Return Order 4711' }).isVisible());
      await page.getByRole('button', { name: 'Invalidate label' }).click();
      // It asks first, on a page of its own.
      await page.getByRole('heading', { level: 1, name: `Invalidate label ${trackingNumber}?` }).waitFor();
      await accessible('confirmation');
      await page.getByRole('button', { name: 'Invalidate label' }).click();
      await page.getByRole('status').waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', new RegExp(`Label ${trackingNumber} is invalidated`));
      assert.ok(await page.getByText('This shipment has no active label.').isVisible());
    });

    it('uploads a batch CSV, watches it finish, and downloads its print file', async () => {
      await page.getByRole('link', { name: 'Batches' }).click();
      await page.getByRole('heading', { level: 1, name: 'Batches' }).waitFor();
      await accessible('batches');
      const csv = await context.request.get(`${base}/dashboard/batches/example.csv`);
      assert.equal(csv.status(), 200);
      await page.getByLabel(label('CSV file')).setInputFiles({ name: 'monday.csv', mimeType: 'text/csv', buffer: await csv.body() });
      await page.getByRole('button', { name: 'Upload and create the labels' }).click();
      await page.getByRole('heading', { level: 1, name: /^monday\.csv: batch of \d+ shipments$/ }).waitFor();
      // The worker makes the labels; the page's script refreshes the progress until it is done.
      await page.locator('#batch-live:not([data-refresh])').waitFor({ timeout: 60_000 });
      assert.match((await page.locator('#batch-live [role="status"]').textContent()) ?? '', /completed/);
      await accessible('batch');
      const [redirect] = await Promise.all([
        page.waitForResponse((r) => /\/dashboard\/batches\/[^/]+\/print-file$/.test(r.url()) && r.status() === 303),
        page.getByRole('button', { name: 'Make the print file' }).click(),
      ]);
      const file = await context.request.get(new URL(redirect.headers().location!, base).href);
      assert.equal(file.status(), 200);
      assert.equal((await file.body()).subarray(0, 5).toString(), '%PDF-');
    });

    it('a batch page left open when the session ends says so and stops asking', async () => {
      // A batch seen while it is still processing, in a second window whose session then ends.
      const batch = await t.ctx.db.selectFrom('batches').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
      await t.ctx.db.updateTable('batches').set({ status: 'processing' }).where('id', '=', batch.id).execute();
      const other = await browser.newContext({ locale: 'en-US', timezoneId: 'Asia/Tokyo' });
      try {
        const tab = await other.newPage();
        await tab.goto(`${base}/dashboard/batches/${batch.id}`);
        await tab.getByLabel(label('Email address')).fill(email);
        await tab.getByLabel(label('Password')).fill(PASSWORD);
        await tab.getByRole('button', { name: 'Sign in' }).click();
        await tab.locator('#batch-live[data-refresh]').waitFor();
        // A zone with no name of its own in English is named by its offset, once.
        assert.equal(await tab.locator('#time-zone').textContent(), 'Times are in your time zone, Asia/Tokyo: it is UTC+9 today.');
        await other.clearCookies();
        await tab.getByRole('alert').filter({ hasText: 'your session ended' }).waitFor({ timeout: 15_000 });
        let asked = 0;
        tab.on('request', () => asked++);
        await tab.waitForTimeout(4500);
        assert.equal(asked, 0, 'no more requests');
      } finally {
        await other.close();
        await t.ctx.db.updateTable('batches').set({ status: 'completed' }).where('id', '=', batch.id).execute();
      }
    });

    it('closes the day for a carrier, place by place, and downloads the manifest', async () => {
      // The batch's UPS parcel leaves from Memphis; one more from Berlin waits too: two places, two manifests.
      const shipment = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': t.apiKey }, payload: sampleShipment });
      const made = await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': t.apiKey }, payload: { shipmentId: shipment.json().id } });
      assert.equal(made.statusCode, 201, made.body);
      const closeTheDay = async () => {
        await page.goto(`${base}/dashboard/manifests`);
        await page.getByRole('heading', { level: 1, name: 'Manifests' }).waitFor();
        await page.getByLabel(label('Carrier')).selectOption('UPS');
        await page.getByRole('button', { name: 'Close the day' }).click();
        // It asks first, naming how many labels and from where.
        await page.getByRole('heading', { level: 1, name: 'Close the day for UPS?' }).waitFor();
      };
      await closeTheDay();
      await page.getByRole('heading', { level: 2, name: 'Hauptstraße 5, Berlin, 10115, DE' }).waitFor();
      await accessible('manifests-places');
      await page.getByRole('button', { name: 'Close the day for UPS at Hauptstraße 5, Berlin, 10115, DE' }).click();
      await page.getByRole('status').waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', /Manifest \S+ was made for UPS with 1 label\. Labels of UPS sent from 1 other place still wait/);
      // The other place, now the only one: one button closes its day.
      await closeTheDay();
      await accessible('manifests-confirm');
      await page.getByRole('button', { name: 'Close the day for UPS', exact: true }).click();
      await page.getByRole('status').waitFor();
      assert.match((await page.getByRole('status').textContent()) ?? '', /Manifest \S+ was made for UPS/);
      await accessible('manifests');
      const href = await page.getByRole('link', { name: /^Download .* \(PDF\)$/ }).first().getAttribute('href');
      const pdf = await context.request.get(new URL(href!, base).href);
      assert.equal(pdf.status(), 200);
      assert.equal((await pdf.body()).subarray(0, 5).toString(), '%PDF-');
    });

    it('shows the webhook\'s deliveries with their attempts, and redelivers one', async () => {
      // Each shipment made above is a shipment.created event; the worker delivers them.
      await page.goto(webhookUrl);
      for (let i = 0; i < 50 && !(await page.getByRole('cell', { name: '200', exact: true }).count()); i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await page.reload();
      }
      assert.ok(await page.getByRole('cell', { name: '200', exact: true }).count(), 'an attempt answered 200 is in the log');
      assert.ok(hooks.received.some((body) => body.includes('"shipment.created"')));
      await accessible('webhook-deliveries');
      await page.getByRole('button', { name: 'Redeliver' }).first().click();
      await page.getByRole('status').waitFor();
    });

    it('creates an API key that is shown once and works, then revokes it', async () => {
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await page.getByLabel(label('Name')).fill('Packing station 2');
      await page.getByRole('button', { name: 'Create the key' }).click();
      const key = ((await page.locator('#new-key').textContent()) ?? '').trim();
      assert.match(key, /^sk_test_/);
      await accessible('keys');
      assert.equal((await fetch(`${base}/v1/shipments`, { headers: { 'x-api-key': key } })).status, 200);
      await page.goto(`${base}/dashboard/keys`);
      assert.equal(await page.locator('#new-key').count(), 0, 'never shown again');
      const prefix = key.slice(0, 16);
      await page.getByRole('button', { name: new RegExp(`^Revoke “Packing station 2” ${prefix}`) }).click();
      await page.getByRole('heading', { level: 1, name: `Revoke the key “Packing station 2” (${prefix}…)?` }).waitFor();
      assert.equal((await fetch(`${base}/v1/shipments`, { headers: { 'x-api-key': key } })).status, 200, 'not revoked before the second press');
      await page.getByRole('button', { name: new RegExp(`^Revoke “Packing station 2” ${prefix}`) }).click();
      await page.getByRole('status').waitFor();
      assert.equal((await fetch(`${base}/v1/shipments`, { headers: { 'x-api-key': key } })).status, 401);
    });

    it('had no console error and no request to another origin on any page', () => {
      assert.deepEqual(problems, []);
    });

    it('signs out: the session ends and the pages ask for a sign-in again', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to the dashboard' }).waitFor();
      await page.goto(`${base}/dashboard/shipments`);
      assert.equal(new URL(page.url()).pathname, '/dashboard/sign-in');
    });
  });
});
