// A real HTTP receiver on the loopback interface for webhook tests: records every request and answers
// as the test says.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How to answer request number `n` (0-based): a status (and headers), or 'hang' to never answer. */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Resolves once `n` requests arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(answer: (n: number, req: Received) => Answer = () => ({ status: 204 }), options: { host?: string; port?: number } = {}): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  let waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const n = received.length;
      received.push(r);
      for (const w of waiters) w();
      const a = answer(n, r);
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(a.status, a.headers ?? {});
      res.end(a.status === 204 ? undefined : 'ok');
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    received,
    waitFor(n, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length >= n) {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== check);
            resolve(received);
          }
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== check);
          reject(new Error(`receiver got ${received.length} requests, expected ${n}`));
        }, timeoutMs);
        waiters.push(check);
        check();
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it returns a truthy value (or throws after `timeoutMs`). */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
