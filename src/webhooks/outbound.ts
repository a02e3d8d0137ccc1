// Outbound safety for webhook deliveries: the target's addresses are resolved here, every one of them
// is checked, and the connection goes to exactly the address that was checked (no DNS-rebinding gap).
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { Agent, buildConnector } from 'undici';
import type { Config } from '../config.ts';

/** The target may not be contacted; the message says which address and why. */
export class OutboundRefused extends Error {}

interface Range {
  net: string;
  prefix: number;
  reason: string;
}

// Cloud metadata endpoints are never reachable, whatever the allow-list or environment says.
const METADATA: Range[] = [
  { net: '169.254.169.254', prefix: 32, reason: 'a cloud metadata address' },
  { net: '169.254.170.2', prefix: 32, reason: 'a cloud metadata address' },
  { net: '100.100.100.200', prefix: 32, reason: 'a cloud metadata address' },
  { net: '168.63.129.16', prefix: 32, reason: 'a cloud platform address' },
  { net: 'fd00:ec2::254', prefix: 128, reason: 'a cloud metadata address' },
];

// Everything that is not the public internet (IANA special-purpose registries). Node's BlockList also
// matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 ranges.
const SPECIAL: Range[] = [
  { net: '0.0.0.0', prefix: 8, reason: 'an unspecified ("this network") address' },
  { net: '10.0.0.0', prefix: 8, reason: 'a private address' },
  { net: '100.64.0.0', prefix: 10, reason: 'a shared (CGNAT) address' },
  { net: '127.0.0.0', prefix: 8, reason: 'a loopback address' },
  { net: '169.254.0.0', prefix: 16, reason: 'a link-local address' },
  { net: '172.16.0.0', prefix: 12, reason: 'a private address' },
  { net: '192.0.0.0', prefix: 24, reason: 'an IETF protocol address' },
  { net: '192.0.2.0', prefix: 24, reason: 'a documentation address' },
  { net: '192.88.99.0', prefix: 24, reason: 'a 6to4 relay address' },
  { net: '192.168.0.0', prefix: 16, reason: 'a private address' },
  { net: '198.18.0.0', prefix: 15, reason: 'a benchmarking address' },
  { net: '198.51.100.0', prefix: 24, reason: 'a documentation address' },
  { net: '203.0.113.0', prefix: 24, reason: 'a documentation address' },
  { net: '224.0.0.0', prefix: 4, reason: 'a multicast address' },
  { net: '240.0.0.0', prefix: 4, reason: 'a reserved or broadcast address' },
  { net: '::', prefix: 128, reason: 'the unspecified address' },
  { net: '::1', prefix: 128, reason: 'a loopback address' },
  { net: '::', prefix: 96, reason: 'an IPv4-compatible (deprecated) address' },
  { net: '::ffff:0:0:0', prefix: 96, reason: 'an IPv4-translated address' },
  { net: '64:ff9b::', prefix: 96, reason: 'a NAT64 address' },
  { net: '64:ff9b:1::', prefix: 48, reason: 'a local NAT64 address' },
  { net: '100::', prefix: 64, reason: 'a discard-only address' },
  { net: '2001::', prefix: 23, reason: 'an IETF protocol (Teredo, ORCHID, …) address' },
  { net: '2001:db8::', prefix: 32, reason: 'a documentation address' },
  { net: '2002::', prefix: 16, reason: 'a 6to4 address' },
  { net: 'fc00::', prefix: 7, reason: 'a unique local (private) address' },
  { net: 'fe80::', prefix: 10, reason: 'a link-local address' },
  { net: 'fec0::', prefix: 10, reason: 'a site-local address' },
  { net: 'ff00::', prefix: 8, reason: 'a multicast address' },
];

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 4 ? 'ipv4' : 'ipv6';
}

function blockListOf(ranges: { net: string; prefix: number }[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) list.addSubnet(r.net, r.prefix, familyOf(r.net));
  return list;
}

// One list answers "is it special?" fast; the per-range lists only name the reason.
const metadataAll = blockListOf(METADATA);
const specialAll = blockListOf(SPECIAL);
const metadataList = METADATA.map((r) => ({ ...r, list: blockListOf([r]) }));
const specialList = SPECIAL.map((r) => ({ ...r, list: blockListOf([r]) }));

export interface OutboundPolicy {
  /** Private ranges and every port are reachable (development). */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_CIDRS. */
  allowed: BlockList;
  /** 80, 443 and WEBHOOK_ALLOWED_PORTS: the ports a target may use outside development. */
  ports: Set<number>;
}

export function outboundPolicy(config: Pick<Config, 'webhookAllowPrivate' | 'webhookAllowedCidrs' | 'webhookAllowedPorts'>): OutboundPolicy {
  const allowed = new BlockList();
  for (const cidr of config.webhookAllowedCidrs) {
    const [net, bits] = cidr.split('/') as [string, string];
    allowed.addSubnet(net, Number(bits), familyOf(net));
  }
  return { allowPrivate: config.webhookAllowPrivate, allowed, ports: new Set([80, 443, ...config.webhookAllowedPorts]) };
}


/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail and a zone allowed), else null. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let a = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(a);
  if (dotted) {
    const [p, q, r, t] = dotted.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, dotted.index)}${((p << 8) | q).toString(16)}:${((r << 8) | t).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.length === 8 ? groups.map((g) => parseInt(g, 16)) : null;
}

/** The IPv4 address in the last 32 bits of `g`. */
function lastIPv4(g: number[]): string {
  return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:7f00:1` → `127.0.0.1`, however spelled), else null. */
export function mappedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  return g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff ? lastIPv4(g) : null;
}

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits by a standard translation: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`) or the
 * well-known NAT64 prefix (`64:ff9b::a.b.c.d`); else null. A network that routes one of them
 * reaches that IPv4 address, so a metadata address is refused in every such spelling.
 */
export function embeddedIPv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const carries =
    (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) || (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) || (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6));
  return carries ? lastIPv4(g) : null;
}

/** Why this address may not be contacted under the policy, or null when it may. */
export function refusalReason(address: string, policy: OutboundPolicy): string | null {
  const family = familyOf(address);
  if (metadataAll.check(address, family)) {
    const metadata = metadataList.find((r) => r.list.check(address, family))!;
    return `${address} is ${metadata.reason}`;
  }
  const inner = embeddedIPv4(address);
  if (inner && metadataAll.check(inner, 'ipv4')) {
    const metadata = metadataList.find((r) => r.list.check(inner, 'ipv4'))!;
    return `${address} (carrying ${inner}) is ${metadata.reason}`;
  }
  const v4 = mappedIPv4(address);
  // IPv4-mapped IPv6 (::ffff:0:0/96) is refused like the other special ranges, whatever IPv4 address it carries.
  if (!specialAll.check(address, family) && !v4) return null;
  if (policy.allowPrivate || policy.allowed.check(address, family)) return null;
  const special = specialList.find((r) => r.list.check(address, family));
  const what = !special ? `${address} is an IPv4-mapped address (give ${v4} itself)` : v4 ? `${address} (IPv4-mapped ${v4}) is ${special.reason}` : `${address} is ${special.reason}`;
  return `${what}, and WEBHOOK_ALLOWED_CIDRS does not allow it`;
}

/** A checked destination: connect to `address`, speak to `url` (Host header, TLS server name). */
export interface Target {
  url: URL;
  address: string;
}

/**
 * Resolves the URL's host (all addresses), refuses when any of them is not allowed, and returns the
 * address to connect to. IPv4 literals in any notation arrive here normalised by the WHATWG URL parser.
 */
export async function resolveTarget(rawUrl: string, policy: OutboundPolicy, signal?: AbortSignal): Promise<Target> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new OutboundRefused(`refused: ${rawUrl} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused(`refused: ${url.protocol} is not http or https`);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (!policy.allowPrivate && !policy.ports.has(port)) throw new OutboundRefused(`refused: port ${port} is not allowed (80, 443 and WEBHOOK_ALLOWED_PORTS are)`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else if (/(^|\.)localhost\.?$/i.test(host)) {
    // RFC 6761: localhost names are loopback whatever a resolver says.
    addresses = ['127.0.0.1', '::1'];
  } else {
    try {
      const resolving = lookup(host, { all: true, verbatim: true });
      const found = signal ? await abortable(resolving, signal) : await resolving;
      addresses = found.map((a) => a.address);
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new OutboundRefused(`could not resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (addresses.length === 0) throw new OutboundRefused(`could not resolve ${host}: no addresses`);
  }
  for (const address of addresses) {
    const reason = refusalReason(address, policy);
    // For a name, the message does not say what it resolves to: that would map a tenant the inside.
    if (reason) throw new OutboundRefused(host === address ? `refused: ${reason}` : `refused: ${host} is not an allowed webhook target`);
  }
  const first = addresses[0]!;
  return { url, address: mappedIPv4(first) ?? first };
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * undici agents that connect only to a checked address, one per (origin, address) so keep-alive
 * connections are reused and a connection never goes anywhere it was not checked for. A cache.
 */
export class PinnedAgents {
  readonly #agents = new Map<string, Agent>();
  readonly #timeoutMs: number;
  readonly #max: number;

  constructor(timeoutMs: number, max = 256) {
    this.#timeoutMs = timeoutMs;
    this.#max = max;
  }

  for(target: Target): Agent {
    const key = `${target.url.origin} ${target.address}`;
    let agent = this.#agents.get(key);
    if (agent) {
      // Most recently used last, so the oldest is evicted first.
      this.#agents.delete(key);
      this.#agents.set(key, agent);
      return agent;
    }
    const base = buildConnector({ timeout: this.#timeoutMs });
    // undici takes the TLS server name from the origin's host, so certificates are checked against
    // the hostname while the socket goes to the checked address.
    const address = target.address;
    agent = new Agent({
      connect: (options, callback) => base({ ...options, hostname: address }, callback),
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      keepAliveTimeout: 4_000,
    });
    this.#agents.set(key, agent);
    if (this.#agents.size > this.#max) {
      const [oldestKey, oldest] = this.#agents.entries().next().value as [string, Agent];
      this.#agents.delete(oldestKey);
      void oldest.close().catch(() => {});
    }
    return agent;
  }

  async close(): Promise<void> {
    const all = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(all.map((a) => a.close().catch(() => {})));
  }
}
