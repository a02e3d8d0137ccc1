// The house rules of docs/architecture.md, read off the source: each capability owns its tables, no
// module reads or writes another's tables, capabilities call each other only through service.ts, and
// the shared layers below them know no capability.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** The rooms that hold one capability each: routes, service, store. */
const CAPABILITIES = ['shipments', 'labels', 'stamps', 'tracking', 'webhooks', 'oauth', 'documents', 'health', 'addresses', 'batches', 'manifests', 'dashboard'];
/** The shared layers every capability stands on. */
const SHARED = ['db', 'carriers', 'render', 'http', 'auth', 'errors', 'countries', 'cache', 'log', 'config', 'job', 'metrics', 'tracing'];
/** The modules that assemble the rest into processes (they may import anything). */
const ASSEMBLY = ['app', 'main', 'worker', 'worker-thread', 'bootstrap', 'cli', 'context'];

/** Every table, by the room that owns it. */
const OWNERS: Record<string, string[]> = {
  auth: ['accounts', 'api_keys', 'oauth_clients', 'signing_keys', 'service_secrets'],
  oauth: ['users', 'oauth_authorization_requests', 'oauth_token_families', 'oauth_authorization_codes', 'oauth_refresh_tokens', 'signin_failures'],
  shipments: ['shipments'],
  labels: ['labels', 'account_logos'],
  stamps: ['stamps', 'stamp_issuers'],
  tracking: ['tracking_events', 'label_tracking', 'sandbox_parcels'],
  webhooks: ['webhooks', 'webhook_deliveries', 'webhook_attempts'],
  documents: ['rendered_documents'],
  batches: ['batches', 'batch_items', 'print_files'],
  manifests: ['manifests'],
  dashboard: ['dashboard_sessions'],
  db: ['counters', 'domain_events'],
  http: ['idempotency_keys', 'rate_limit_buckets'],
};

interface SourceFile {
  path: string;
  room: string;
  text: string;
}

function sources(dir = SRC): SourceFile[] {
  const out: SourceFile[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'migrations') out.push(...sources(path));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      out.push({ path: relative(SRC, path), room: roomOf(relative(SRC, path)), text: readFileSync(path, 'utf8') });
    }
  }
  return out;
}

/** `labels/service.ts` is in room `labels`; `errors.ts` is its own room `errors`. */
function roomOf(path: string): string {
  const [first, ...rest] = path.split('/');
  return rest.length > 0 ? first! : first!.replace(/\.ts$/, '');
}

/** The files this one imports from src/, as paths relative to src/. */
function importsOf(file: SourceFile): string[] {
  const out: string[] = [];
  for (const m of file.text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)) {
    out.push(normalize(join(dirname(file.path), m[1]!)));
  }
  for (const m of file.text.matchAll(/^import\s+'(\.[^']+)'/gm)) out.push(normalize(join(dirname(file.path), m[1]!)));
  return out;
}

/** The tables a file's queries name (Kysely's builders, aliases dropped; common table expressions are not tables). */
function tablesOf(file: SourceFile): string[] {
  const found = new Set<string>();
  for (const m of file.text.matchAll(/\.(?:selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin|mergeInto)\(\s*'([a-z_]+)/g)) found.add(m[1]!);
  for (const m of file.text.matchAll(/\bcte\(\s*'([a-z_]+)'/g)) found.delete(m[1]!);
  return [...found];
}

const files = sources();
const owner = new Map(Object.entries(OWNERS).flatMap(([room, tables]) => tables.map((t) => [t, room] as const)));

test('every room is named in the house plan', () => {
  const rooms = new Set(files.map((f) => f.room));
  const planned = new Set([...CAPABILITIES, ...SHARED, ...ASSEMBLY]);
  assert.deepEqual([...rooms].filter((r) => !planned.has(r)).sort(), [], 'a new folder or top-level module: add it to docs/architecture.md and to this test');
});

test('every table has exactly one owner', () => {
  const schema = readFileSync(join(SRC, 'db', 'schema.ts'), 'utf8');
  const start = schema.indexOf('export interface Database');
  const body = schema.slice(start, schema.indexOf('\n}', start));
  const tables = [...body.matchAll(/^ {2}([a-z_]+): \w+;/gm)].map((m) => m[1]!).sort();
  assert.ok(tables.length > 20, 'the Database interface was read');
  assert.deepEqual([...owner.keys()].sort(), tables);
  assert.equal(owner.size, Object.values(OWNERS).flat().length, 'a table is listed under two owners');
});

test('no module reads or writes another room\'s tables', () => {
  const trespass: string[] = [];
  for (const file of files) {
    for (const table of tablesOf(file)) {
      const room = owner.get(table);
      if (room === undefined) trespass.push(`${file.path}: unknown table ${table}`);
      else if (room !== file.room) trespass.push(`${file.path} queries ${table}, which ${room} owns`);
    }
  }
  assert.deepEqual(trespass, []);
});

test('a store is private to its room', () => {
  const reaches: string[] = [];
  for (const file of files) {
    for (const target of importsOf(file)) {
      if (target.endsWith('/store.ts') && roomOf(target) !== file.room) reaches.push(`${file.path} imports ${target}`);
    }
  }
  assert.deepEqual(reaches, []);
});

test('capabilities call each other only through service.ts', () => {
  const wrong: string[] = [];
  for (const file of files.filter((f) => CAPABILITIES.includes(f.room))) {
    for (const target of importsOf(file)) {
      const room = roomOf(target);
      if (room !== file.room && CAPABILITIES.includes(room) && !target.endsWith('/service.ts')) wrong.push(`${file.path} imports ${target}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the shared layers know no capability and no assembly', () => {
  const upward: string[] = [];
  for (const file of files.filter((f) => SHARED.includes(f.room))) {
    for (const target of importsOf(file)) {
      const room = roomOf(target);
      if (CAPABILITIES.includes(room) || (ASSEMBLY.includes(room) && room !== 'context')) upward.push(`${file.path} imports ${target}`);
    }
  }
  assert.deepEqual(upward, []);
});

test('rooms depend on each other without cycles', () => {
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    for (const target of importsOf(file)) {
      const room = roomOf(target);
      // context.ts only gathers types of what a request handler is given.
      if (room === file.room || room === 'context') continue;
      if (!edges.has(file.room)) edges.set(file.room, new Set());
      edges.get(file.room)!.add(room);
    }
  }
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (room: string, path: string[]): void => {
    if (state.get(room) === 'done') return;
    if (state.get(room) === 'open') {
      cycles.push([...path.slice(path.indexOf(room)), room].join(' → '));
      return;
    }
    state.set(room, 'open');
    for (const next of edges.get(room) ?? []) visit(next, [...path, room]);
    state.set(room, 'done');
  };
  for (const room of edges.keys()) visit(room, []);
  assert.deepEqual(cycles, []);
});

test('the rules see what they check', () => {
  // A guard against a rule that passes because its pattern matches nothing.
  const labelsStore = files.find((f) => f.path === 'labels/store.ts')!;
  assert.deepEqual(tablesOf(labelsStore).sort(), ['account_logos', 'labels']);
  const tracking = files.find((f) => f.path === 'tracking/service.ts')!;
  assert.ok(importsOf(tracking).includes('labels/service.ts'));
  assert.ok(importsOf(tracking).includes('tracking/store.ts'));
  assert.deepEqual(tablesOf({ path: 'x.ts', room: 'x', text: "db.selectFrom('labels as l').innerJoin('shipments', 'a', 'b')" }).sort(), ['labels', 'shipments']);
});
