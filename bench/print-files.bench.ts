// §11 print files: a 1,000-label PDF print file against the same 1,000 labels rendered alone by a
// render pool of the same size (same run), the service's peak RSS while it streams the file, and
// `GET /v1/shipments/{id}` latency while it renders beside the same reads with nothing rendering.
// Targets (issue 15): the file within 1.5 x the labels alone, peak RSS under 400 MB, the read's
// p99 under 10 ms while it renders.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { Renderer } from '../src/render/renderer.ts';
import type { LabelData } from '../src/render/index.ts';
import { api, atMostMs, fmtMs, progress, startApp, table, targetTable, type BenchServer } from './lib.ts';

const LABELS = Number(process.env.BENCH_PRINT_LABELS ?? 1000);
const READERS = 2;

export const shipment = {
  carrier: 'UPS',
  service: 'ground',
  from: { name: 'Lager Süd GmbH', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' },
  to: { name: 'Ada Lovelace', street1: '350 Fifth Avenue', street2: 'Suite 2100', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 1.2, unit: 'kg' } },
  messages: ['Fragile', 'Thank you for your order'],
};

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Closed-loop reads of one shipment until `stop` resolves; the latencies in ms, sorted. */
async function reads(app: BenchServer, id: string, stop: Promise<unknown>): Promise<number[]> {
  let done = false;
  void stop.then(() => (done = true));
  const out: number[] = [];
  await Promise.all(Array.from({ length: READERS }, async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${app.url}/v1/shipments/${id}`, { headers: { 'x-api-key': app.apiKey! } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET shipment answered ${res.status}`);
      out.push(performance.now() - t0);
    }
  }));
  return out.sort((a, b) => a - b);
}

const p = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor((q / 100) * sorted.length))] ?? NaN;

export async function run(): Promise<string> {
  const app = await startApp({ worker: true, likeNpmStart: true, env: { RATE_LIMIT_PER_SECOND: '0', SANDBOX_TRACKING: '0' } });
  try {
    const started = rssMb(app.pid);
    progress(`a batch of ${LABELS} labels`);
    const batch = await api<{ id: string }>(app, 'POST', '/v1/batches', { items: Array.from({ length: LABELS }, (_, i) => ({ shipment: { ...shipment, reference: `print ${i}` } })) }, 202);
    for (;;) {
      const b = await api<{ status: string }>(app, 'GET', `/v1/batches/${batch.id}`);
      if (b.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const one = await api<{ id: string }>(app, 'POST', '/v1/shipments', shipment);
    const afterBatch = rssMb(app.pid);

    progress('the same labels rendered alone by a render pool of the same size');
    const db = new DatabaseSync(app.databaseUrl!.replace(/^sqlite:/, ''), { readOnly: true });
    const labels = (db.prepare('select label_data from labels order by id').all() as { label_data: string }[]).map((r) => JSON.parse(r.label_data) as LabelData);
    db.close();
    const renderer = new Renderer({ threads: availableParallelism(), memoryBytes: 0 });
    await renderer.render({ layout: 'label', data: labels[0]! }, 'PDF'); // threads started
    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: availableParallelism() * 2 }, async () => {
      while (next < labels.length) await renderer.render({ layout: 'label', data: labels[next++]! }, 'PDF');
    }));
    const alone = performance.now() - t0;
    await renderer.close();

    progress('reads with nothing rendering');
    const quiet = await reads(app, one.id, new Promise((r) => setTimeout(r, 3000)));

    /** Creates the batch's print file and downloads it to the last byte: its time and size. */
    const print = async (): Promise<{ ms: number; bytes: number }> => {
      const t1 = performance.now();
      const file = await api<{ url: string }>(app, 'POST', '/v1/print-files', { batchId: batch.id });
      const res = await fetch(file.url.replace(/^https?:\/\/[^/]+/, app.url));
      let bytes = 0;
      for await (const chunk of res.body!) bytes += (chunk as Uint8Array).byteLength;
      if (res.status !== 200) throw new Error(`download answered ${res.status}`);
      return { ms: performance.now() - t1, bytes };
    };
    progress(`the ${LABELS}-label print file alone`);
    let firstPeak = rssMb(app.pid);
    const firstSampler = setInterval(() => (firstPeak = Math.max(firstPeak, rssMb(app.pid))), 20);
    const { ms: printFile, bytes } = await print();
    clearInterval(firstSampler);

    progress(`the print file again, with reads beside it`);
    let peak = rssMb(app.pid);
    const before = peak;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(app.pid))), 20);
    const again = print();
    const busy = await reads(app, one.id, again);
    const { ms: printBusy } = await again;
    clearInterval(sampler);
    const ratio = printFile / alone;

    return [
      '## Print files',
      '',
      `The service's RSS: ${started.toFixed(0)} MB started, ${afterBatch.toFixed(0)} MB after the batch, ${firstPeak.toFixed(0)} MB at most during the first print file.`,
      '',
      `A batch of ${LABELS} UPS labels with messages, then \`POST /v1/print-files\` (PDF, layout \`label\`) and its download to the last byte, against the same labels rendered one by one (PDF) by a render pool of the same size (${availableParallelism()} threads, ${availableParallelism() * 2} at a time) in the benchmark's process. Meanwhile ${READERS} connections read \`GET /v1/shipments/{id}\` in a closed loop; the service (started with the memory settings of npm start) has its RSS sampled every 20 ms.`,
      '',
      table(
        ['scenario', 'time', 'bytes', 'reads', 'read p50', 'read p99'],
        [
          [`${LABELS} labels rendered alone`, fmtMs(alone), '–', '–', '–', '–'],
          ['reads with nothing rendering (3 s)', '–', '–', quiet.length, fmtMs(p(quiet, 50)), fmtMs(p(quiet, 99))],
          [`print file of ${LABELS} labels, created and downloaded`, fmtMs(printFile), bytes.toLocaleString('en-US'), '–', '–', '–'],
          [`the same with reads beside it (RSS ${before.toFixed(0)} MB before)`, fmtMs(printBusy), bytes.toLocaleString('en-US'), busy.length, fmtMs(p(busy, 50)), fmtMs(p(busy, 99))],
        ],
      ),
      '',
      targetTable([
        { what: 'print file time ÷ the labels rendered alone', measured: `${ratio.toFixed(2)} ×`, target: '≤ 1.5 ×', ratio, met: ratio <= 1.5 },
        { what: "the service's peak RSS while it streams the file", measured: `${peak.toFixed(0)} MB`, target: '< 400 MB', ratio: peak / 400, met: peak < 400 },
        atMostMs('GET /v1/shipments/{id} p99 while it renders', p(busy, 99), 10, p(quiet, 99)),
      ], 'reads with nothing rendering'),
      '',
    ].join('\n');
  } finally {
    await app.stop();
  }
}
