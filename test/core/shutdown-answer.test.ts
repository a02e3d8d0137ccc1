// A request that arrives while the service shuts down (on a connection already open) is refused as
// every other is: 503 with Retry-After and the connection closed, in the service's own words; the
// health check in its own shape, so a load balancer stops sending there.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import { startTestApp } from '../helpers.ts';

/** A request whose first lines are sent now and whose end is sent by `finish`, which answers what came back. */
async function begun(port: number, lines: string[]): Promise<{ finish(): Promise<{ head: string; body: string }> }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`${lines.join('\r\n')}\r\n`);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
  return {
    async finish() {
      socket.write('\r\n');
      await once(socket, 'close');
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      return { head, body };
    },
  };
}

describe('a request that arrives while the service shuts down', () => {
  it("is answered 503 in the service's own words, with Retry-After, and its connection closed; the health check as unavailable", async () => {
    const t = await startTestApp();
    const { port } = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    // The requests' first lines are in before the shutdown; their ends come after it has begun.
    const list = await begun(Number(port), ['GET /v1/shipments?limit=1 HTTP/1.1', 'Host: 127.0.0.1', `X-API-Key: ${t.apiKey}`]);
    const health = await begun(Number(port), ['GET /v1/health HTTP/1.1', 'Host: 127.0.0.1']);
    const token = await begun(Number(port), ['POST /oauth/token HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 0']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = t.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [refused, unhealthy, tokenRefused] = [await list.finish(), await health.finish(), await token.finish()];
    await closing;
    for (const { head } of [refused, unhealthy, tokenRefused]) {
      assert.match(head, /^HTTP\/1\.1 503 /, head);
      assert.match(head, /\r\nretry-after: 1\r\n/i, head);
      assert.match(head, /\r\nconnection: close\r\n/i, head);
    }
    assert.deepEqual(JSON.parse(refused.body), { code: 'UNAVAILABLE', message: 'the service is shutting down: send the request again' });
    assert.equal(JSON.parse(unhealthy.body).status, 'unavailable');
    // The token endpoint in its own shape (RFC 6749), and likewise no failure of ours.
    assert.deepEqual(JSON.parse(tokenRefused.body), { error: 'temporarily_unavailable', error_description: 'the service is shutting down: send the request again' });
    // Planned, so not logged as a failure of ours (no error line, no stack): an info line says it.
    const lines = t.logs.map((l) => JSON.parse(l) as { level: number; msg: string });
    assert.ok(lines.some((l) => l.level === 30 && l.msg === 'the service is shutting down: send the request again'), 'an info line');
    assert.ok(!lines.some((l) => l.level >= 50), lines.filter((l) => l.level >= 50).map((l) => l.msg).join('; '));
  });
});
