// Fills a migrated SQLite database with tracking events, fast: labels (with their shipments) of a
// separate `seed` account, `perLabel` events each, as multi-row inserts in large transactions.
// `npm exec -- node bench/seed-tracking.ts <file.db> <events> [perLabel]` or `seedTracking(…)`.
import { DatabaseSync } from 'node:sqlite';
import { isoNow, uuidv7 } from '../src/db/ids.ts';

const STATUSES = ['pre_transit', 'in_transit', 'in_transit', 'in_transit', 'out_for_delivery', 'delivered'];
const UPS_CODES: Record<string, string> = { pre_transit: 'M', in_transit: 'I', out_for_delivery: 'O', delivered: 'D' };
const ROWS_PER_INSERT = 500;
const LABELS_PER_TRANSACTION = 500;

function placeholders(rows: number, columns: number): string {
  const one = `(${Array(columns).fill('?').join(',')})`;
  return Array(rows).fill(one).join(',');
}

/** Adds `events` events (rounded up to whole labels) and returns how long it took in ms. */
export function seedTracking(path: string, events: number, perLabel = 100): { labels: number; events: number; ms: number } {
  const started = Date.now();
  const db = new DatabaseSync(path);
  db.exec('PRAGMA busy_timeout = 10000');
  db.exec('PRAGMA synchronous = OFF');
  const now = isoNow();
  let account = db.prepare("select id from accounts where name = 'seed'").get() as { id: string } | undefined;
  if (!account) {
    account = { id: uuidv7() };
    db.prepare("insert into accounts (id, name, created_at) values (?, 'seed', ?)").run(account.id, now);
  }
  const accountId = account.id;
  const already = (db.prepare('select count(*) as n from labels where account_id = ?').get(accountId) as { n: number }).n;

  const address = JSON.stringify({ name: 'Seed', street1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' });
  const parcel = JSON.stringify({ weight: { value: 1, unit: 'kg' } });
  const labelCount = Math.ceil(events / perLabel);
  const insertEvents = db.prepare(`insert into tracking_events (id, label_id, account_id, carrier, status, carrier_code, "timestamp", location, description, created_at) values ${placeholders(ROWS_PER_INSERT, 10)}`);
  let pending: (string | number)[] = [];
  let pendingRows = 0;
  const flush = () => {
    if (pendingRows === 0) return;
    if (pendingRows === ROWS_PER_INSERT) insertEvents.run(...pending);
    else db.prepare(`insert into tracking_events (id, label_id, account_id, carrier, status, carrier_code, "timestamp", location, description, created_at) values ${placeholders(pendingRows, 10)}`).run(...pending);
    pending = [];
    pendingRows = 0;
  };

  const t0 = Date.UTC(2025, 0, 1);
  for (let first = 0; first < labelCount; first += LABELS_PER_TRANSACTION) {
    const n = Math.min(LABELS_PER_TRANSACTION, labelCount - first);
    db.exec('BEGIN');
    const shipments: string[] = [];
    const labels: string[] = [];
    const shipmentValues: (string | null)[] = [];
    const labelValues: (string | null)[] = [];
    for (let i = 0; i < n; i++) {
      const serial = already + first + i + 1;
      const shipmentId = uuidv7();
      const labelId = uuidv7();
      shipments.push(shipmentId);
      labels.push(labelId);
      const trackingNumber = `SEED${String(serial).padStart(14, '0')}`;
      shipmentValues.push(shipmentId, accountId, 'UPS', 'ground', address, address, parcel, null, 'in_transit', labelId, trackingNumber, now, now);
      labelValues.push(labelId, accountId, shipmentId, 'UPS', 'ground', trackingNumber, 'PDF', '4x6', 'active', '{}', now, now, null);
    }
    db.prepare(`insert into shipments (id, account_id, carrier, service, from_address, to_address, parcel, reference, status, label_id, tracking_number, created_at, updated_at) values ${placeholders(n, 13)}`).run(...shipmentValues);
    db.prepare(`insert into labels (id, account_id, shipment_id, carrier, service, tracking_number, format, size, status, label_data, created_at, expires_at, invalidated_at) values ${placeholders(n, 13)}`).run(...labelValues);
    for (const labelId of labels) {
      for (let e = 0; e < perLabel; e++) {
        const status = STATUSES[Math.min(STATUSES.length - 1, Math.floor((e * STATUSES.length) / perLabel))]!;
        pending.push(uuidv7(), labelId, accountId, 'UPS', status, UPS_CODES[status]!, new Date(t0 + e * 3600_000).toISOString(), `Hub ${e % 17}`, 'Seeded event', now);
        if (++pendingRows === ROWS_PER_INSERT) flush();
      }
    }
    flush();
    db.exec('COMMIT');
  }
  // Copy the WAL (hundreds of MB for a million events) into the database file now: otherwise the
  // app's checkpointer thread does it in the background while the benchmark measures the app.
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return { labels: labelCount, events: labelCount * perLabel, ms: Date.now() - started };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [path, count, perLabel] = process.argv.slice(2);
  if (!path || !count) {
    console.error('usage: node bench/seed-tracking.ts <file.db> <events> [perLabel]');
    process.exit(2);
  }
  const r = seedTracking(path.replace(/^sqlite:/, ''), Number(count), perLabel ? Number(perLabel) : 100);
  console.log(`seeded ${r.events} events on ${r.labels} labels in ${(r.ms / 1000).toFixed(1)} s`);
}
