// With ROLE=all the background jobs run on a thread of their own (src/worker-thread.ts): a webhook is
// delivered while the thread that answers requests is blocked, and stopping the thread stops them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { startTestApp, type TestApp } from '../helpers.ts';
import { JOBS_THREAD_NAME, startWorkerThread } from '../../src/worker-thread.ts';
import type { Worker } from '../../src/worker.ts';
import { spawnChild, type Child } from './support.ts';

// A receiver in another process, so that blocking this thread does not block it; it prints when each
// delivery arrives.
const RECEIVER = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => { console.log('delivered ' + Date.now()); s.end(); }); }).listen(0, '127.0.0.1', function () { console.log('port ' + this.address().port); });`;

const SHIPMENT = { carrier: 'USPS', service: 'priority_mail', from: { name: 'A', street1: '1100 Congress Ave', city: 'Austin', state: 'TX', postalCode: '78701', country: 'US' }, to: { name: 'B', street1: '1 Ashburton Pl', city: 'Boston', state: 'MA', postalCode: '02108', country: 'US' }, parcel: { weight: { value: 1, unit: 'lb' } } };

describe('ROLE=all: background jobs on a thread of their own', () => {
  let t: TestApp;
  let receiver: Child;
  let jobs: Worker | undefined;
  before(async () => {
    t = await startTestApp(undefined, { SANDBOX_TRACKING: '0' });
    receiver = spawnChild(process.execPath, ['-e', RECEIVER], {});
  });
  after(async () => {
    await jobs?.stop();
    receiver.process.kill();
    await t.close();
  });

  it('deliver a webhook while the event loop that answers requests is blocked', async () => {
    const [, port] = await receiver.waitFor(/port (\d+)/);
    const hook = await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url: `http://127.0.0.1:${port}/hook`, events: ['shipment.created'] } });
    assert.equal(hook.statusCode, 201, hook.body);
    // The event waits for the jobs, which start on their own thread while this one is blocked: no
    // timer, no I/O, no promise runs here until the delivery has been made (or the wait is over).
    const created = await t.request({
      method: 'POST',
      url: '/v1/shipments',
      payload: SHIPMENT,
    });
    assert.equal(created.statusCode, 201);
    const starting = startWorkerThread(t.ctx.config, (code) => assert.fail(`the jobs thread exited with ${code}`));
    const blockedFrom = Date.now();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 8000);
    const blockedUntil = Date.now();
    jobs = await starting;
    const [, at] = await receiver.waitFor(/delivered (\d+)/);
    assert.ok(Number(at) >= blockedFrom && Number(at) <= blockedUntil, `delivered at ${at}, while this thread was blocked from ${blockedFrom} to ${blockedUntil}`);
    // The operating system lists the thread by its name (`top -H`, and the day benchmark's CPU split).
    const names = readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());
    assert.ok(names.includes(JOBS_THREAD_NAME), `threads: ${names.join(', ')}`);
  });

  it('stop when asked, and no longer deliver', async () => {
    await jobs!.stop();
    jobs = undefined;
    const before = receiver.stdout().match(/delivered/g)?.length ?? 0;
    await t.request({
      method: 'POST',
      url: '/v1/shipments',
      payload: SHIPMENT,
    });
    const pending = await t.ctx.db.selectFrom('domain_events').select('id').where('dispatched_at', 'is', null).execute();
    assert.equal(pending.length, 1, 'the new event waits for a worker');
    assert.equal(receiver.stdout().match(/delivered/g)?.length ?? 0, before);
  });
});
