// The dashboard's sign-in sessions (dashboard_sessions), keyed by the SHA-256 of the cookie's token.
import { PURGE_CHUNK, type Db } from '../db/index.ts';
import type { DashboardSessionsTable } from '../db/schema.ts';

export type SessionRow = DashboardSessionsTable;

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

export async function findSession(db: Db, id: string, now: string): Promise<SessionRow | undefined> {
  return db.selectFrom('dashboard_sessions').selectAll().where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id', '=', id).execute();
}

export async function deleteExpiredSessions(db: Db, now: string): Promise<number> {
  // At most PURGE_CHUNK rows a statement; the job runs again while there are more.
  const result = await db.deleteFrom('dashboard_sessions').where('id', 'in', (eb) => eb.selectFrom('dashboard_sessions').select('id').where('expires_at', '<=', now).limit(PURGE_CHUNK)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
