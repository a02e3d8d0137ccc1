// `POST /v1/labels` at 10 connections against a bare Fastify "hello" baseline, on SQLite.
// Target: p99 ≤ 20 ms. Each label needs its own shipment (one active label per shipment), so the
// shipments are created first and every request takes the next one. The download of the PDF is
// measured too (it renders on every request), without a target.
import { BENCH_CUSTOMS, api, atMostMs, CONNECTIONS, fmtRate, load, loadTable, progress, startApp, startBaseline, targetTable, type BenchServer, type LoadResult, baselineMean, baselineSentence } from './lib.ts';

export const shipment = {
  carrier: 'UPS',
  service: 'worldwide_saver',
  from: { name: 'Jürgen Müller', company: 'Müller GmbH', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' },
  to: { name: 'Ελένη Παπαδοπούλου', street1: '350 Fifth Avenue', street2: 'Suite 2100', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 1.2, unit: 'kg' }, length: 30, width: 20, height: 10, dimensionUnit: 'cm' },
  reference: 'bench',
  customs: BENCH_CUSTOMS,
};

/** Labels per measured run (BENCH_LABELS, default 3000) after a warm-up of a tenth as many. */
const LABELS = Number(process.env.BENCH_LABELS ?? 3000);
const WARMUP_LABELS = Math.max(100, Math.round(LABELS / 10));

async function createShipments(app: BenchServer, n: number): Promise<string[]> {
  const ids: string[] = [];
  const worker = async () => {
    while (ids.length < n) {
      ids.push('');
      const at = ids.length - 1;
      ids[at] = (await api<{ id: string }>(app, 'POST', '/v1/shipments', shipment)).id;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return ids;
}

/** Exactly one POST /v1/labels per shipment id, 10 connections; throws on any status but 201. */
function labelLoad(name: string, app: BenchServer, shipmentIds: string[]): Promise<LoadResult> {
  let sent = 0;
  return load(name, {
    url: `${app.url}/v1/labels`,
    method: 'POST',
    headers: { 'x-api-key': app.apiKey!, 'content-type': 'application/json' },
    nextBody: () => JSON.stringify({ shipmentId: shipmentIds[sent++ % shipmentIds.length] }),
    amount: shipmentIds.length,
    warmupSeconds: 0,
    expectStatus: 201,
    server: app,
  });
}

export async function run(): Promise<string> {
  const baseline = await startBaseline();
  const app = await startApp();
  try {
    progress(`creating ${LABELS + WARMUP_LABELS} shipments`);
    const ids = await createShipments(app, LABELS + WARMUP_LABELS);
    const before = await load('baseline: bare Fastify GET / (before)', { url: baseline.url, server: baseline });
    await labelLoad('warm-up', app, ids.slice(0, WARMUP_LABELS));
    const labels = await labelLoad('POST /v1/labels (fresh shipment each)', app, ids.slice(WARMUP_LABELS));
    const label = await api<{ id: string; url: string }>(app, 'GET', `/v1/labels/${(await api<{ label: { id: string } }>(app, 'GET', `/v1/shipments/${ids[ids.length - 1]}`)).label.id}?format=PDF`);
    const pdf = await load('GET label url, PDF 4x6 (renders each time)', { url: label.url.replace(/^https?:\/\/[^/]+/, app.url), expectStatus: 200, server: app });
    const after = await load('baseline: bare Fastify GET / (after)', { url: baseline.url, server: baseline });

    const base = baselineMean(before, after);
    const checks = [atMostMs(`POST /v1/labels: p99 at ${CONNECTIONS} connections`, labels.p99, 20, base.p99)];
    return [
      '## Labels: creating labels',
      '',
      `The real app on a fresh SQLite file (WAL), logging every request at \`info\` to /dev/null, in its own process; autocannon at ${CONNECTIONS} connections in another. ` +
        `${fmtRate(LABELS)} labels are created, each for its own pre-created UPS shipment (after a warm-up of ${fmtRate(WARMUP_LABELS)}): ` +
        'one transaction per label takes the next tracking serial, inserts the label with its stored label data and records it on the shipment. ' +
        'Creating a label does not render it; rendering happens on download, measured on the last row with the PDF link.',
      '',
      loadTable([before, labels, pdf, after], base),
      '',
      baselineSentence(base, 'The server CPU per request is the figure least disturbed by other work on a shared machine.'),
      '',
      targetTable(checks),
      '',
    ].join('\n');
  } finally {
    await Promise.all([baseline.stop(), app.stop()]);
  }
}
