// The one cache module (src/cache.ts): bounded, with lifetimes, and one switch that turns every cache off.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCache, setCachesEnabled } from '../../src/cache.ts';
import { startTestApp } from '../helpers.ts';
import { rememberedApiKeys } from '../../src/auth/credentials.ts';
import { UPS_LABEL } from '../render/fixtures.ts';

describe('createCache', () => {
  afterEach(() => setCachesEnabled(true));

  it('keeps at most `max` entries, the least recently used going first', () => {
    const cache = createCache<string, number>({ max: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1);
    cache.set('c', 3);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 1);
    assert.equal(cache.size, 2);
  });

  it('forgets an entry when its lifetime is over, with a lifetime per entry too', () => {
    let now = 1_000_000;
    const cache = createCache<string, number>({ max: 10, ttlMs: 1000, clock: () => now });
    cache.set('short', 1, 10);
    cache.set('default', 2);
    now += 9;
    assert.equal(cache.get('short'), 1);
    now += 2;
    assert.equal(cache.get('short'), undefined);
    assert.equal(cache.get('default'), 2);
    now += 1000;
    assert.equal(cache.get('default'), undefined);
  });

  it('bounds the sum of sizes', () => {
    const cache = createCache<string, string>({ max: 100, maxSize: 10, sizeOf: (v) => v.length });
    cache.set('a', 'xxxxxx');
    cache.set('b', 'yyyyyy');
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.calculatedSize, 6);
  });

  it('keeps nothing and finds nothing while caches are off', () => {
    const cache = createCache<string, number>({ max: 10 });
    cache.set('kept', 1);
    setCachesEnabled(false);
    assert.equal(cache.get('kept'), undefined);
    cache.set('new', 2);
    setCachesEnabled(true);
    assert.equal(cache.get('new'), undefined);
    assert.equal(cache.get('kept'), 1);
  });
});

describe('CACHES=0', () => {
  it('turns off the API-key memory and the kept documents, and the service answers the same', async () => {
    const t = await startTestApp(undefined, { CACHES: '0' });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await t.request({ method: 'GET', url: '/v1/shipments' })).statusCode, 200);
      assert.equal(rememberedApiKeys(t.ctx.db), 0);
      const source = { layout: 'label' as const, data: UPS_LABEL };
      const first = await t.ctx.renderer.render(source, 'PNG');
      const again = await t.ctx.renderer.render(source, 'PNG');
      assert.deepEqual(again.body, first.body);
      assert.equal(t.ctx.renderer.stats.memoryDocuments, 0);
    } finally {
      await t.close();
      setCachesEnabled(true);
    }
  });
});
