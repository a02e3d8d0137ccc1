// The README's URL for a PostgreSQL server on the same machine: the socket's directory, URL-encoded,
// where the host goes. The service works through it as it does over TCP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { POSTGRES_URL, sampleShipment, startTestApp } from '../helpers.ts';

const SOCKET_DIR = '/var/run/postgresql';
const tcp = new URL(POSTGRES_URL);
const port = tcp.port || '5432';
const credentials = tcp.username ? `${tcp.username}${tcp.password ? `:${tcp.password}` : ''}@` : '';
const socketUrl = `postgres://${credentials}${encodeURIComponent(SOCKET_DIR)}:${port}${tcp.pathname}`;
const socket = `${SOCKET_DIR}/.s.PGSQL.${port}`;
// Only where the test server is this machine's: its socket is then the same server.
const local = ['127.0.0.1', 'localhost', '[::1]'].includes(tcp.hostname);
const skip = !local ? `the test server (${tcp.hostname}) is not on this machine` : !existsSync(socket) ? `no PostgreSQL socket at ${socket}` : false;

describe("PostgreSQL through its Unix socket (the README's same-host URL)", { skip }, () => {
  it('creates a shipment and reads it back, on a connection that is not TCP', async () => {
    const t = await startTestApp({ name: 'postgres', url: socketUrl });
    try {
      const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
      assert.equal(created.statusCode, 201, created.body);
      const read = await t.request({ method: 'GET', url: `/v1/shipments/${created.json<{ id: string }>().id}` });
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(read.json<{ reference: string }>().reference, sampleShipment.reference);
      // The server's own view of this session: no client address is what a Unix socket looks like.
      const { rows } = await sql<{ addr: string | null }>`select inet_client_addr()::text as addr`.execute(t.ctx.db);
      assert.equal(rows[0]?.addr, null);
    } finally {
      await t.close();
    }
  });
});
