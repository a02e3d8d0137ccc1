// SQLite transactions take the write lock when they begin (BEGIN IMMEDIATE, src/db/sqlite.ts), so a
// transaction that reads and then writes never fails half-way because another process wrote between.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { withTestApp } from '../helpers.ts';

describe('SQLite transactions', () => {
  const t = withTestApp();

  it('hold the write lock from their first statement on: another connection cannot begin a write meanwhile', async () => {
    const file = t.ctx.config.databaseUrl.slice('sqlite:'.length);
    const other = new DatabaseSync(file);
    other.exec('PRAGMA busy_timeout = 0');
    try {
      await t.ctx.db.transaction().execute(async (tx) => {
        // Nothing written yet, only read: a deferred transaction would hold no write lock here.
        await tx.selectFrom('accounts').select('id').execute();
        assert.throws(() => other.exec('BEGIN IMMEDIATE'), /database is locked/);
      });
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
  });
});
