// Outbound safety (docs/webhooks.md): webhook targets never reach private, loopback, link-local, CGNAT,
// multicast or metadata addresses outside development unless WEBHOOK_ALLOWED_CIDRS allows them; the
// check is made on the resolved addresses and the connection goes to the checked one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { request } from 'undici';
import { createShipment, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { startWorker, type Worker } from '../../src/worker.ts';
import { webhookJobs } from '../../src/webhooks/jobs.ts';
import { mappedIPv4, outboundPolicy, OutboundRefused, PinnedAgents, refusalReason, resolveTarget } from '../../src/webhooks/outbound.ts';
import { eventually, startReceiver, type Receiver } from './receiver.ts';

const strict = outboundPolicy({ webhookAllowPrivate: false, webhookAllowedCidrs: [], webhookAllowedPorts: [9] });
const development = outboundPolicy({ webhookAllowPrivate: true, webhookAllowedCidrs: [], webhookAllowedPorts: [] });

const REFUSED: [string, RegExp][] = [
  ['127.0.0.1', /loopback/],
  ['127.255.255.254', /loopback/],
  ['0.0.0.0', /unspecified/],
  ['10.1.2.3', /private/],
  ['172.16.0.1', /private/],
  ['172.31.255.255', /private/],
  ['192.168.1.1', /private/],
  ['100.64.0.1', /CGNAT/],
  ['100.127.255.255', /CGNAT/],
  ['169.254.1.1', /link-local/],
  ['169.254.169.254', /metadata/],
  ['224.0.0.1', /multicast/],
  ['239.255.255.250', /multicast/],
  ['255.255.255.255', /broadcast/],
  ['198.18.0.1', /benchmarking/],
  ['::', /unspecified/],
  ['::1', /loopback/],
  ['::ffff:127.0.0.1', /IPv4-mapped 127\.0\.0\.1\) is a loopback/],
  ['::ffff:7f00:1', /IPv4-mapped 127\.0\.0\.1\) is a loopback/],
  ['::ffff:a9fe:a9fe', /metadata/],
  ['::ffff:10.0.0.1', /private/],
  ['::127.0.0.1', /IPv4-compatible/],
  ['fc00::1', /unique local/],
  ['fd12:3456::1', /unique local/],
  ['fd00:ec2::254', /metadata/],
  ['fe80::1', /link-local/],
  ['ff02::1', /multicast/],
  ['64:ff9b::7f00:1', /NAT64/],
  ['::ffff:0:7f00:1', /IPv4-translated/],
  ['::ffff:0:a9fe:a9fe', /metadata/],
  ['2002:7f00:1::', /6to4/],
  ['2001:db8::1', /documentation/],
];
const PUBLIC = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '100.128.0.1', '172.32.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'];

describe('refusalReason', () => {
  for (const [address, why] of REFUSED) {
    it(`refuses ${address} outside development`, () => {
      const reason = refusalReason(address, strict);
      assert.ok(reason, `${address} was allowed`);
      assert.match(reason, why);
    });
  }
  it('refuses a public IPv4 address in its IPv4-mapped IPv6 spelling (::ffff:0:0/96), unless listed', () => {
    assert.match(String(refusalReason('::ffff:93.184.216.34', strict)), /IPv4-mapped address \(give 93\.184\.216\.34 itself\)/);
    assert.match(String(refusalReason('::ffff:5db8:d822', strict)), /IPv4-mapped/);
    // However it is spelled out.
    assert.match(String(refusalReason('0:0:0:0:0:ffff:808:808', strict)), /IPv4-mapped address \(give 8\.8\.8\.8 itself\)/);
    assert.equal(refusalReason('93.184.216.34', strict), null);
    assert.equal(refusalReason('::ffff:93.184.216.34', outboundPolicy({ webhookAllowPrivate: false, webhookAllowedCidrs: ['93.184.216.0/24'], webhookAllowedPorts: [] })), null);
  });

  it('allows public addresses', () => {
    for (const a of PUBLIC) assert.equal(refusalReason(a, strict), null, a);
  });
  it('allows private ranges in development but never a metadata address', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '::1', 'fd12::1', '::ffff:192.168.0.1']) assert.equal(refusalReason(a, development), null, a);
    for (const a of ['169.254.169.254', 'fd00:ec2::254', '::ffff:169.254.169.254']) assert.match(String(refusalReason(a, development)), /metadata/, a);
    // The metadata address in every IPv6 spelling that carries an IPv4 address: compatible,
    // translated, NAT64, with a dotted tail or a zone.
    for (const a of ['::a9fe:a9fe', '::169.254.169.254', '::ffff:0:a9fe:a9fe', '::ffff:0:169.254.169.254', '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '0:0:0:0:0:ffff:a9fe:a9fe', '::a9fe:a9fe%eth0', '::ffff:0:6464:64c8']) {
      assert.match(String(refusalReason(a, development)), /metadata|platform/, a);
    }
    // Not a translation: the same low bits under another prefix are an ordinary address.
    assert.equal(refusalReason('2606:4700::a9fe:a9fe', development), null);
  });
  it('allows exactly the ranges of WEBHOOK_ALLOWED_CIDRS, IPv4-mapped forms included', () => {
    const policy = outboundPolicy({ webhookAllowPrivate: false, webhookAllowedCidrs: ['10.20.0.0/16', 'fd00:1::/32'], webhookAllowedPorts: [] });
    assert.equal(refusalReason('10.20.3.4', policy), null);
    assert.equal(refusalReason('::ffff:10.20.3.4', policy), null);
    assert.equal(refusalReason('fd00:1:2::3', policy), null);
    assert.ok(refusalReason('10.21.0.1', policy));
    assert.ok(refusalReason('127.0.0.1', policy));
    assert.match(String(refusalReason('169.254.169.254', outboundPolicy({ webhookAllowPrivate: false, webhookAllowedCidrs: ['169.254.0.0/16'], webhookAllowedPorts: [] }))), /metadata/);
  });

  const octet = fc.integer({ min: 0, max: 255 });
  const inRange = (first: number[], secondMin = 0, secondMax = 255) =>
    fc.tuple(fc.constantFrom(...first), fc.integer({ min: secondMin, max: secondMax }), octet, octet).map((o) => o.join('.'));
  const privateV4 = fc.oneof(inRange([127]), inRange([10]), inRange([192], 168, 168), inRange([172], 16, 31), inRange([169], 254, 254), inRange([100], 64, 127), inRange([0]));
  const toHex = (v4: string) => {
    const o = v4.split('.').map(Number);
    return `::ffff:${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  };

  it('refuses every private IPv4 address in each of its spellings (property)', async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, async (v4) => {
        const o = v4.split('.').map(Number);
        const n = ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!;
        assert.ok(refusalReason(v4, strict), v4);
        assert.ok(refusalReason(`::ffff:${v4}`, strict), `::ffff:${v4}`);
        assert.ok(refusalReason(toHex(v4), strict), toHex(v4));
        assert.equal(mappedIPv4(toHex(v4)), v4);
        const spellings = [`http://${n}/`, `http://0x${n.toString(16)}/`, `http://0${n.toString(8)}/`, `http://${o.map((x) => `0x${x.toString(16)}`).join('.')}/`, `http://[::ffff:${v4}]/`];
        for (const url of spellings) await assert.rejects(resolveTarget(url, strict), OutboundRefused, url);
      }),
      { numRuns: 200 },
    );
  });
});

describe('resolveTarget', () => {
  const spellings = [
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0x7f.0.0.1/',
    'http://017700000001/',
    'http://127.1/',
    'http://0/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://localhost/',
    'http://LOCALHOST./',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'https://[fe80::1]/',
  ];
  for (const url of spellings) {
    it(`refuses ${url} outside development`, async () => {
      await assert.rejects(resolveTarget(url, strict), (err: Error) => err instanceof OutboundRefused && /^refused: /.test(err.message));
    });
  }

  it('names the hostname, never the address it resolved to (that would map the inside for a tenant)', async () => {
    await assert.rejects(resolveTarget('http://localhost:9/x', strict), /^Error: refused: localhost is not an allowed webhook target$/);
    await assert.rejects(resolveTarget('http://hooks.localhost/', strict), /^Error: refused: hooks\.localhost is not an allowed webhook target$/);
  });

  it('returns the checked address to connect to, IPv4 for an IPv4-mapped literal', async () => {
    const policy = outboundPolicy({ webhookAllowPrivate: false, webhookAllowedCidrs: ['127.0.0.1/32'], webhookAllowedPorts: [8080] });
    assert.equal((await resolveTarget('http://[::ffff:127.0.0.1]:8080/', policy)).address, '127.0.0.1');
    assert.equal((await resolveTarget('http://2130706433/', policy)).address, '127.0.0.1');
    assert.equal((await resolveTarget('http://93.184.216.34/', strict)).address, '93.184.216.34');
  });

  it('outside development, only ports 80, 443 and WEBHOOK_ALLOWED_PORTS', async () => {
    const policy = outboundPolicy({ webhookAllowPrivate: false, webhookAllowedCidrs: [], webhookAllowedPorts: [8443] });
    for (const url of ['http://93.184.216.34/', 'https://93.184.216.34/', 'https://93.184.216.34:8443/']) assert.ok(await resolveTarget(url, policy), url);
    for (const url of ['http://93.184.216.34:22/', 'https://93.184.216.34:6379/', 'http://93.184.216.34:8080/']) {
      await assert.rejects(resolveTarget(url, policy), /port \d+ is not allowed/, url);
    }
    assert.ok(await resolveTarget('http://127.0.0.1:6379/', development), 'development allows any port');
  });

  it('reports a name that does not resolve', async () => {
    await assert.rejects(resolveTarget('http://no-such-host.invalid/', strict), /could not resolve no-such-host\.invalid/);
  });
});

describe('PinnedAgents', () => {
  it('connects to the checked address, not to whatever the hostname resolves to, keeping the Host header', async () => {
    const hosts: string[] = [];
    const server = createServer((req, res) => {
      hosts.push(String(req.headers.host));
      res.end('pinned');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const agents = new PinnedAgents(2000);
    try {
      // `.invalid` never resolves (RFC 6761): the request can only arrive through the pinned address.
      const target = { url: new URL(`http://hooks.example.invalid:${port}/x`), address: '127.0.0.1' };
      const res = await request(target.url, { dispatcher: agents.for(target), method: 'POST', body: '{}' });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'pinned');
      assert.deepEqual(hosts, [`hooks.example.invalid:${port}`]);
    } finally {
      await agents.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

forEachDatabase((database) => {
  describe('deliveries outside development', () => {
    let v4: Receiver;
    let v6: Receiver | null = null;
    const reached = () => v4.received.length + (v6?.received.length ?? 0);
    before(async () => {
      v4 = await startReceiver();
      try {
        v6 = await startReceiver(undefined, { host: '::1', port: v4.port });
      } catch {
        v6 = null;
      }
    });
    after(async () => {
      await v4.close();
      await v6?.close();
    });

    async function run(env: Record<string, string>, urls: string[], check: (t: TestApp, deliveries: { url: string; delivery: any }[]) => void | Promise<void>): Promise<void> {
      // The listeners' ports are allowed, so what is tested here is the address alone.
      const ports = [...new Set(urls.map((u) => new URL(u).port).filter(Boolean))].join(',');
      const t = await startTestApp(database, { APP_ENV: 'staging', WEBHOOK_RETRY_SCHEDULE: '0', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_ALLOWED_PORTS: ports, ...env });
      const worker: Worker = startWorker(t.ctx, webhookJobs());
      try {
        const hooks: { url: string; id: string }[] = [];
        for (const url of urls) {
          const res = await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url, events: ['shipment.created'] } });
          assert.equal(res.statusCode, 201, res.body);
          hooks.push({ url, id: res.json().id });
        }
        await createShipment(t);
        const done = await eventually(
          async () => {
            const all = await Promise.all(hooks.map(async (h) => ({ url: h.url, delivery: (await t.request({ method: 'GET', url: `/v1/webhooks/${h.id}/deliveries` })).json()[0] })));
            return all.every((x) => x.delivery && x.delivery.status !== 'pending') ? all : null;
          },
          30_000,
          'every delivery to finish',
        );
        await check(t, done);
      } finally {
        await worker.stop();
        await t.close();
      }
    }

    it('never reaches a private listener through literal, encoded, IPv6, mapped or resolved addresses, and records the refusal', async () => {
      const p = v4.port;
      const urls = [
        `http://127.0.0.1:${p}/`,
        `http://[::1]:${p}/`,
        `http://2130706433:${p}/`,
        `http://0x7f.0.0.1:${p}/`,
        `http://0x7f.1:${p}/`,
        `http://[::ffff:127.0.0.1]:${p}/`,
        `http://localhost:${p}/`,
        'http://169.254.169.254/latest/meta-data/',
        'http://[fd00:ec2::254]/',
      ];
      await run({}, urls, (_t, deliveries) => {
        assert.equal(reached(), 0, 'a private listener was reached');
        for (const { url, delivery } of deliveries) {
          assert.equal(delivery.status, 'failed', url);
          assert.equal(delivery.attempts.length, 2, url);
          for (const a of delivery.attempts) {
            assert.equal(a.responseStatus, null, url);
            assert.match(a.error, /^refused: /, url);
          }
        }
        assert.match(deliveries.find((d) => d.url.includes('localhost'))!.delivery.attempts[0].error, /localhost is not an allowed webhook target/);
        assert.match(deliveries.find((d) => d.url.includes('169.254'))!.delivery.attempts[0].error, /metadata/);
      });
    });

    it('reaches the same listener once WEBHOOK_ALLOWED_CIDRS allows 127.0.0.1/32, and only that range', async () => {
      const p = v4.port;
      const allowed = [`http://127.0.0.1:${p}/a`, `http://2130706433:${p}/b`, `http://[::ffff:127.0.0.1]:${p}/c`];
      await run({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' }, [...allowed, `http://[::1]:${p}/d`, `http://127.0.0.2:${p}/e`], (_t, deliveries) => {
        for (const { url, delivery } of deliveries) {
          if (allowed.includes(url)) assert.equal(delivery.status, 'succeeded', url);
          else assert.match(delivery.attempts[0].error, /^refused: /, url);
        }
        assert.deepEqual(v4.received.map((r) => r.path).sort(), ['/a', '/b', '/c']);
        assert.equal(v6?.received.length ?? 0, 0);
      });
    });
  });
});
