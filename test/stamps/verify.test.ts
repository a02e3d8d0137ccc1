import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import { createShipment, fakeClock, forEachDatabase, startTestApp, withTestApp } from '../helpers.ts';
import { signIndicium } from '../../src/stamps/indicium.ts';
import { currentSigner } from '../../src/stamps/service.ts';
import { createStamp, verify } from './support.ts';

const NOT_GENUINE = { genuine: false, status: null, stampId: null };
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function segments(token: string): [string, string, string] {
  return token.split('.') as [string, string, string];
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(segments(token)[1], 'base64url').toString());
}

forEachDatabase((database) => {
  const t = withTestApp(database);

  const expectVerdict = async (indicium: unknown, expected: object, apiKey?: string) => {
    const res = await verify(t, indicium, apiKey);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), expected);
  };

  describe('POST /v1/stamps/verify', () => {
    it('says genuine and active for a stamp just issued, and reveals only its id and status', async () => {
      const s = await createStamp(t);
      await expectVerdict(s.indicium, { genuine: true, status: 'active', stampId: s.id });
    });

    it('needs a credential but no scope; another account gets the same answer', async () => {
      const s = await createStamp(t);
      const noScopes = await t.newAccount([]);
      await expectVerdict(s.indicium, { genuine: true, status: 'active', stampId: s.id }, noScopes.apiKey);
      const labelsOnly = await t.newAccount(['read:labels']);
      await expectVerdict(s.indicium, { genuine: true, status: 'active', stampId: s.id }, labelsOnly.apiKey);
      const anonymous = await t.app.inject({ method: 'POST', url: '/v1/stamps/verify', payload: { indicium: s.indicium } });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.json().code, 'UNAUTHORIZED');
    });

    it('says invalidated (still genuine) after invalidation, and expired after expiresAt', async () => {
      const a = await createStamp(t);
      const b = await createStamp(t);
      await t.request({ method: 'PUT', url: `/v1/stamps/${a.id}/invalid?ids=${a.id}` });
      await expectVerdict(a.indicium, { genuine: true, status: 'invalidated', stampId: a.id });
      await t.ctx.db.updateTable('stamps').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('id', '=', b.id).execute();
      await expectVerdict(b.indicium, { genuine: true, status: 'expired', stampId: b.id });
    });

    it('rejects every single-character change anywhere in the indicium (header, payload, signature)', async () => {
      const s = await createStamp(t);
      const token: string = s.indicium;
      for (let i = 0; i < token.length; i++) {
        if (token[i] === '.') continue;
        const replacement = ALPHABET[(ALPHABET.indexOf(token[i]!) + 1) % 64];
        const altered = token.slice(0, i) + replacement + token.slice(i + 1);
        const res = await verify(t, altered);
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), NOT_GENUINE, `character ${i} changed still verifies`);
      }
    });

    it('rejects every single flipped byte of the decoded header, payload and signature', async () => {
      const s = await createStamp(t);
      const parts = segments(s.indicium);
      for (let p = 0; p < 3; p++) {
        const bytes = Buffer.from(parts[p]!, 'base64url');
        // Every byte of the signature; every fifth of the (longer) header and payload.
        for (let i = 0; i < bytes.length; i += p === 2 ? 1 : 5) {
          const flipped = Buffer.from(bytes);
          flipped[i] = flipped[i]! ^ 0x01;
          const altered = parts.map((x, k) => (k === p ? flipped.toString('base64url') : x)).join('.');
          await expectVerdict(altered, NOT_GENUINE);
        }
      }
    });

    it('rejects a JWS with the same claims signed by a foreign key that claims our kid', async () => {
      const s = await createStamp(t);
      const { kid } = decodeProtectedHeader(s.indicium);
      const { privateKey } = await generateKeyPair('ES256');
      const claims = claimsOf(s.indicium);
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: kid!, typ: 'indicium+jwt' }).sign(privateKey);
      await expectVerdict(forged, NOT_GENUINE);
      // Our header and payload with the foreign signature.
      const spliced = `${segments(s.indicium)[0]}.${segments(s.indicium)[1]}.${segments(forged)[2]}`;
      await expectVerdict(spliced, NOT_GENUINE);
    });

    it('rejects tokens signed with our access-token key, HS256 with the public key, alg none, and our stamp key without the indicium type', async () => {
      const s = await createStamp(t);
      const claims = claimsOf(s.indicium);
      const access = await t.ctx.keys.signingKey('access_token');
      await expectVerdict(await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: access.kid, typ: 'indicium+jwt' }).sign(access.privateKey), NOT_GENUINE);
      const { kid } = decodeProtectedHeader(s.indicium);
      const publicJwk = t.ctx.keys.jwks().keys.find((k) => k.kid === kid)!;
      const hmacSecret = new TextEncoder().encode(JSON.stringify(publicJwk));
      await expectVerdict(await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: kid!, typ: 'indicium+jwt' }).sign(hmacSecret), NOT_GENUINE);
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid, typ: 'indicium+jwt' })).toString('base64url')}.${segments(s.indicium)[1]}.`;
      await expectVerdict(none, NOT_GENUINE);
      const stamp = await t.ctx.keys.signingKey('stamp');
      await expectVerdict(await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: stamp.kid, typ: 'JWT' }).sign(stamp.privateKey), NOT_GENUINE);
      await expectVerdict(await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: stamp.kid }).sign(stamp.privateKey), NOT_GENUINE);
    });

    it('rejects indicia signed with our stamp key whose claims are malformed or name no stamp we issued', async () => {
      const s = await createStamp(t);
      const claims = claimsOf(s.indicium) as { jti: string; sn: string; sub: string; car: string; org: string; dst: string; iat: number };
      const { sn: _sn, ...withoutSerial } = claims;
      const stamp = await t.ctx.keys.signingKey('stamp');
      const sign = (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'ES256', kid: stamp.kid, typ: 'indicium+jwt' }).sign(stamp.privateKey);
      await expectVerdict(await sign(withoutSerial), NOT_GENUINE);
      await expectVerdict(await sign({ ...claims, car: 'TNT' }), NOT_GENUINE);
      await expectVerdict(await sign({ ...claims, iat: 'yesterday' }), NOT_GENUINE);
      await expectVerdict(signIndicium(await currentSigner(t.ctx.keys), { ...claims, jti: '01890000-0000-7000-8000-0000000000ff' }), NOT_GENUINE);
      await expectVerdict(signIndicium(await currentSigner(t.ctx.keys), { ...claims, sn: 'ST-9999-999999' }), NOT_GENUINE);
    });

    it('answers malformed text with 200 genuine:false, never 500', async () => {
      const s = await createStamp(t);
      const [h, p, sig] = segments(s.indicium);
      const junk = ['', 'hello', 'a.b.c', '...', `${h}.${p}`, `${h}.${p}.${sig}.${sig}`, `${h}.${p}.${sig}=`,
        `${Buffer.from('{"alg":').toString('base64url')}.${p}.${sig}`, `${Buffer.from('[]').toString('base64url')}.${p}.${sig}`,
        `${h}.${Buffer.from('not json').toString('base64url')}.${sig}`, `${h}.${p}.${'A'.repeat(2000)}`, 'é.é.é'];
      for (const indicium of junk) await expectVerdict(indicium, NOT_GENUINE);
    });

    it('takes a scan as a scanner sends it: a line end, a tab, spaces or GS1 separators around the code; a control character inside it is not genuine, 200', async () => {
      const s = await createStamp(t);
      const genuine = { genuine: true, status: 'active', stampId: s.id };
      for (const scanned of [`${s.indicium}\r\n`, `${s.indicium}\n`, `\t${s.indicium}`, `  ${s.indicium} `, `\u001d${s.indicium}\u001d`, `\u0000${s.indicium}`]) await expectVerdict(scanned, genuine);
      const [h, p, sig] = segments(s.indicium);
      for (const inside of [`${h}.${p}\u001d.${sig}`, `${h}\r\n.${p}.${sig}`, `${h}.${p}.${sig.slice(0, 5)}\u0000${sig.slice(5)}`, '\u0000\u0001']) await expectVerdict(inside, NOT_GENUINE);
    });

    it('a long run of spaces inside is read once, however long the body: answered at once (400 over 4 KB), never held', async () => {
      const started = performance.now();
      for (const indicium of [`a${' '.repeat(4000)}a`, `a${' '.repeat(500_000)}a`, `${' '.repeat(500_000)}\u0000`]) {
        const res = await t.request({ method: 'POST', url: '/v1/stamps/verify', payload: { indicium } });
        assert.equal(res.statusCode, indicium.length > 4096 ? 400 : 200, res.body.slice(0, 200));
      }
      // A scan that took quadratic time would take minutes here (0.5 s for a run of 20,000 spaces); these take milliseconds.
      assert.ok(performance.now() - started < 10_000, `${Math.round(performance.now() - started)} ms`);
    });

    it('answers 400 INVALID_INPUT when indicium is missing, not a string or longer than 4 KB', async () => {
      for (const payload of [{}, { indicium: 42 }, { indicium: null }, { indicium: 'x'.repeat(4097) }, { indicium: 'a.b.c', extra: 1 }]) {
        const res = await t.request({ method: 'POST', url: '/v1/stamps/verify', payload });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(res.json().code, 'INVALID_INPUT');
      }
    });

    it('keeps old stamps genuine after the stamp key is rotated, and signs new ones with the new key', async () => {
      const old = await createStamp(t);
      const newKid = await t.ctx.keys.rotate('stamp');
      const fresh = await createStamp(t);
      assert.equal(decodeProtectedHeader(fresh.indicium).kid, newKid);
      assert.notEqual(decodeProtectedHeader(old.indicium).kid, newKid);
      await expectVerdict(old.indicium, { genuine: true, status: 'active', stampId: old.id });
      await expectVerdict(fresh.indicium, { genuine: true, status: 'active', stampId: fresh.id });
      const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
      const kids = jwks.keys.map((k: { kid: string }) => k.kid);
      assert.ok(kids.includes(newKid) && kids.includes(decodeProtectedHeader(old.indicium).kid));
    });

    it('verifies a stamp key another process added (reloads the key ring once for an unknown kid)', async (tc) => {
      const { KeyRing } = await import('../../src/auth/keyring.ts');
      const other = new KeyRing(t.ctx.db);
      await other.init();
      await other.rotate('stamp');
      const s = await createStamp(t);
      const foreignProcessStamp = signIndicium(await currentSigner(other), claimsOf(s.indicium) as never);
      // Unknown key ids reload the ring at most once a second.
      fakeClock(tc).tick(1100);
      await expectVerdict(foreignProcessStamp, { genuine: true, status: 'active', stampId: s.id });
    });
  });

});

forEachDatabase((database) => {
  describe('POST /v1/stamps/verify with an Idempotency-Key', () => {
    it('answers the current status, never a replay of an earlier verdict', async () => {
      const t = await startTestApp(database);
      try {
        const shipment = await createShipment(t);
        const created = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id, format: 'PNG' } });
        assert.equal(created.statusCode, 201, created.body);
        const stamp = created.json();
        const row = await t.ctx.db.selectFrom('stamps').select('indicium').where('id', '=', stamp.id).executeTakeFirstOrThrow();
        const verify = () => t.request({ method: 'POST', url: '/v1/stamps/verify', headers: { 'idempotency-key': 'same-key' }, payload: { indicium: row.indicium } });
        const first = await verify();
        assert.equal(first.json().status, 'active');
        assert.equal((await t.request({ method: 'PUT', url: `/v1/stamps/${stamp.id}/invalid?ids=${stamp.id}` })).statusCode, 204);
        const second = await verify();
        assert.equal(second.headers['idempotent-replayed'], undefined);
        assert.equal(second.json().status, 'invalidated');
      } finally {
        await t.close();
      }
    });
  });
});
