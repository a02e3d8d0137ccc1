// Rendered documents kept in the database (src/documents/service.ts) and their purge, on both databases;
// and a download's document reused by another process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createShipment, forEachDatabase, withTestApp } from '../helpers.ts';
import { documentStore, DOCUMENT_TTL_MS, purgeRenderedDocuments } from '../../src/documents/service.ts';
import { etagOf, Renderer } from '../../src/render/renderer.ts';

forEachDatabase((database) => {
  describe('rendered documents in the database', () => {
    const t = withTestApp(database);

    it('are kept byte for byte under their key, once', async () => {
      const store = documentStore(t.ctx.db);
      const body = new Uint8Array([0, 1, 2, 255, 0]);
      await store.put('k-bytes', body);
      await store.put('k-bytes', new Uint8Array([9]));
      assert.deepEqual(await store.get('k-bytes'), body);
      assert.equal(await store.get('k-missing'), undefined);
    });

    it('are purged when older than a download link lives, then oldest first beyond the size bound', async () => {
      await t.ctx.db.deleteFrom('rendered_documents').execute();
      const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
      const row = (key: string, bytes: number, msAgo: number) => ({ key, body: new Uint8Array(bytes), bytes, created_at: at(msAgo) });
      await t.ctx.db.insertInto('rendered_documents').values([row('expired', 10, DOCUMENT_TTL_MS + 1000), row('old', 400, 3000), row('middle', 400, 2000), row('new', 400, 1000)]).execute();
      const ctx = { ...t.ctx, config: { ...t.ctx.config, renderStoreBytes: 900 } };
      assert.equal(await purgeRenderedDocuments(ctx), 2);
      const left = await t.ctx.db.selectFrom('rendered_documents').select('key').orderBy('key').execute();
      assert.deepEqual(left.map((r) => r.key), ['middle', 'new']);
      assert.equal(await purgeRenderedDocuments(ctx), 0);
    });

    it('hold what a download drew, and another process renders nothing to serve it again', async () => {
      await t.ctx.db.deleteFrom('rendered_documents').execute();
      const shipment = await createShipment(t);
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'PNG' } })).json();
      const u = new URL(label.url);
      const download = await t.app.inject({ method: 'GET', url: u.pathname + u.search });
      assert.equal(download.statusCode, 200);
      // Stored after the answer: closing the renderer waits for it.
      await t.ctx.renderer.close();
      const stored = await t.ctx.db.selectFrom('rendered_documents').select(['key', 'body', 'bytes']).execute();
      assert.equal(stored.length, 1);
      assert.ok(Buffer.from(stored[0]!.body).equals(download.rawPayload));
      assert.equal(stored[0]!.bytes, download.rawPayload.length);

      const row = await t.ctx.db.selectFrom('labels').select('label_data').where('id', '=', label.id).executeTakeFirstOrThrow();
      const other = new Renderer({ threads: 1, memoryBytes: 0, store: documentStore(t.ctx.db) });
      try {
        const doc = await other.render({ layout: 'label', data: JSON.parse(row.label_data) }, 'PNG');
        assert.equal(other.stats.rendered, 0);
        assert.equal(doc.key, stored[0]!.key);
        assert.equal(etagOf(doc.key), download.headers.etag);
        assert.ok(doc.body.equals(download.rawPayload));
      } finally {
        await other.close();
      }
    });
  });
});
