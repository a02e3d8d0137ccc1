// `npm test`: every *.test.ts under test/, with PostgreSQL required (storage tests run on both
// databases). Stale schemas of earlier interrupted runs are dropped first.
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { POSTGRES_URL } from './helpers.ts';

const client = new pg.Client({ connectionString: POSTGRES_URL });
try {
  await client.connect();
} catch (err) {
  console.error(`PostgreSQL is not reachable at ${POSTGRES_URL} (${(err as Error).message}).`);
  console.error('Start it (see README) or point TEST_DATABASE_URL at one. The suite runs every storage test on PostgreSQL too.');
  process.exit(1);
}
const { rows } = await client.query<{ nspname: string }>("select nspname from pg_namespace where nspname like 't\\_%'");
// Schemas are named t_<pid>_…; drop only those whose test process is gone (other runs may be live).
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
for (const { nspname } of rows) {
  const pid = Number(nspname.split('_')[1]);
  if (!alive(pid)) await client.query(`DROP SCHEMA IF EXISTS ${nspname} CASCADE`);
}
await client.end();

const files = process.argv.slice(2);
const args = ['--test', '--test-concurrency=2', '--test-timeout=300000', ...(files.length ? files : ['test/**/*.test.ts'])];
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, TEST_DATABASE_URL: POSTGRES_URL } });
process.exit(result.status ?? 1);
