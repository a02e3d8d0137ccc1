// The delivery rules in isolation: what an answer means (retry schedule with ±10 % jitter, Retry-After,
// 410, the last retry), Standard Webhooks signatures for any secret, and secrets sealed at rest.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { parseRetryAfter, verdict, type AttemptOutcome } from '../../src/webhooks/delivery.ts';
import { secretProblem, signerFor, webhookHeaders } from '../../src/webhooks/signing.ts';
import { openSecret, sealSecret } from '../../src/webhooks/secret-box.ts';

const SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];
const answer = (status: number | null, retryAfterMs: number | null = null): AttemptOutcome => ({ status, error: status === null || status >= 300 ? 'x' : null, retryAfterMs, durationMs: 1 });

describe('verdict', () => {
  it('succeeds on any 2xx, on any attempt', () => {
    fc.assert(fc.property(fc.integer({ min: 200, max: 299 }), fc.integer({ min: 1, max: 20 }), (status, attempt) => assert.deepEqual(verdict(answer(status), attempt, SCHEDULE), { status: 'succeeded' })));
  });

  it('fails for good on 410, even with retries left', () => {
    assert.deepEqual(verdict(answer(410), 1, SCHEDULE), { status: 'failed', reason: 'gone' });
  });

  it('retries anything else after the scheduled delay ±10 %, and fails after the last retry', () => {
    const failures = fc.oneof(fc.constant(null), fc.integer({ min: 300, max: 599 }).filter((s) => s !== 410), fc.integer({ min: 100, max: 199 }));
    fc.assert(
      fc.property(failures, fc.integer({ min: 1, max: SCHEDULE.length + 3 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (status, attempt, r) => {
        const v = verdict(answer(status), attempt, SCHEDULE, () => r);
        if (attempt > SCHEDULE.length) return assert.deepEqual(v, { status: 'failed', reason: 'exhausted' });
        assert.equal(v.status, 'pending');
        const planned = SCHEDULE[attempt - 1]! * 1000;
        const delay = (v as { delayMs: number }).delayMs;
        assert.ok(delay >= Math.floor(planned * 0.9) && delay <= Math.ceil(planned * 1.1), `${delay} for ${planned}`);
      }),
    );
  });

  it('spreads retries over the whole jitter range', () => {
    const delays = [0, 0.5, 0.999].map((r) => (verdict(answer(500), 2, SCHEDULE, () => r) as { delayMs: number }).delayMs);
    assert.deepEqual(delays, [270_000, 300_000, 329_940]);
  });

  it('waits at least as long as Retry-After asks', () => {
    const v = verdict(answer(429, 60_000), 1, SCHEDULE, () => 0.5);
    assert.deepEqual(v, { status: 'pending', delayMs: 60_000 });
    assert.deepEqual(verdict(answer(503, 1000), 2, SCHEDULE, () => 0.5), { status: 'pending', delayMs: 300_000 });
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP-dates, caps at 24 h, and ignores anything else', () => {
    const now = Date.parse('2025-06-01T12:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Sun, 01 Jun 2025 12:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Sun, 01 Jun 2025 11:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('999999999', now), 24 * 3600 * 1000);
    assert.equal(parseRetryAfter(['7', '9'], now), 7000);
    for (const bad of [undefined, '', 'soon', '-5', '1.5e3', 'NaN']) assert.equal(parseRetryAfter(bad, now), null, String(bad));
  });
});

describe('Standard Webhooks signature', () => {
  it('verifies with the official package for any plain secret (its UTF-8 bytes), event id and body', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 64 }).filter((s) => !s.startsWith('whsec_')), fc.uuid(), fc.json(), (secret, id, body) => {
        const headers = webhookHeaders(id, body, signerFor(secret));
        assert.equal(headers['webhook-id'], id);
        assert.deepEqual(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(body, headers), JSON.parse(body));
      }),
      { numRuns: 200 },
    );
  });

  it('verifies with the official package for any whsec_ secret (its decoded bytes)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.json(), (key, body) => {
        const secret = `whsec_${Buffer.from(key).toString('base64')}`;
        assert.equal(secretProblem(secret), null);
        const headers = webhookHeaders('01890a5d-ac96-774b-bcce-b302099a8057', body, signerFor(secret));
        assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/);
        new Webhook(secret).verify(body, headers);
        new Webhook(Buffer.from(key), { format: 'raw' }).verify(body, headers);
      }),
      { numRuns: 200 },
    );
  });

  it('signs "{id}.{timestamp}.{body}" with the timestamp it sends, in Unix seconds', () => {
    const headers = webhookHeaders('msg_1', '{"a":1}', signerFor('k'), Date.parse('2025-06-01T12:00:00.999Z'));
    assert.equal(headers['webhook-timestamp'], String(Date.parse('2025-06-01T12:00:00Z') / 1000));
    assert.equal(headers['webhook-signature'], new Webhook(Buffer.from('k'), { format: 'raw' }).sign('msg_1', new Date('2025-06-01T12:00:00Z'), '{"a":1}'));
  });

  it('sends no signature without a secret', () => {
    assert.deepEqual(Object.keys(webhookHeaders('msg_1', '{}', null)).sort(), ['webhook-id', 'webhook-timestamp']);
  });

  it('rejects whsec_ secrets that are not base64', () => {
    for (const s of ['whsec_', 'whsec_***', 'whsec_a b']) assert.ok(secretProblem(s), s);
    for (const s of ['plain', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec-not-prefixed']) assert.equal(secretProblem(s), null, s);
  });
});

describe('secrets at rest', () => {
  it('round-trips any secret, never contains it in clear, and does not open under another webhook id or key', () => {
    const key = randomBytes(32);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200, unit: 'grapheme' }), (secret) => {
        const sealed = sealSecret(key, 'hook-a', secret);
        assert.match(sealed, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
        assert.equal(openSecret(key, 'hook-a', sealed), secret);
        assert.throws(() => openSecret(key, 'hook-b', sealed));
        assert.throws(() => openSecret(randomBytes(32), 'hook-a', sealed));
      }),
      { numRuns: 100 },
    );
    assert.notEqual(sealSecret(key, 'hook-a', 'same'), sealSecret(key, 'hook-a', 'same'));
  });
});
