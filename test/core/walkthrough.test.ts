// The README's five-minute walkthrough works as written: its `sh` blocks run in order in one bash
// against the service on a new database, as a reader pastes them, with only what differs per machine
// put in (the port, the key the start printed, the webhook receiver's port, the download folder), and
// every answer its comments show (`# {"status":"ok",…}`) appears in what they print.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ROOT, spawnChild } from './support.ts';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The walkthrough's `sh` blocks, in order. */
function walkthroughBlocks(): string[] {
  const start = README.indexOf('## A five-minute walkthrough');
  const end = README.indexOf('\n## ', start + 1);
  assert.ok(start >= 0 && end > start, 'the README has its walkthrough');
  return [...README.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The answers a block's comments show, as patterns of a whole line (`…` stands for anything). */
function shownAnswers(block: string): RegExp[] {
  return block
    .split('\n')
    .filter((line) => /^# (\{.*\}|\d{3})$/.test(line))
    .map((line) => new RegExp(`^${line.slice(2).replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '.*')}$`));
}

function runBash(script: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const bash = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    bash.stdout.on('data', (d) => (stdout += String(d)));
    bash.stderr.on('data', (d) => (stderr += String(d)));
    const timer = setTimeout(() => process.kill(-bash.pid!, 'SIGKILL'), timeoutMs);
    bash.on('exit', (code) => {
      clearTimeout(timer);
      // Whatever a block left running (the webhook receiver, if the block failed before its kill).
      try {
        process.kill(-bash.pid!, 'SIGKILL');
      } catch {
        // Nothing was left.
      }
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

describe("the README's walkthrough", () => {
  it('runs as written against a new service, block by block, and prints what its comments show', async () => {
    const blocks = walkthroughBlocks();
    assert.ok(blocks.length >= 10, `the walkthrough's blocks: ${blocks.length}`);
    const dir = mkdtempSync(join(tmpdir(), 'walkthrough-'));
    const [port, hookPort] = [await freePort(), await freePort()];
    const env = { DATABASE_URL: `sqlite:${join(dir, 'shipping.db')}`, PORT: String(port), METRICS_PORT: '0', APP_ENV: '', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: '', LOG_LEVEL: 'warn' };
    const service = spawnChild(process.execPath, ['src/main.ts'], env);
    try {
      const [, key] = await service.waitFor(/It is shown this once; keep it:\n\s+(sk_test_[A-Za-z0-9]+)\n/);
      // What differs on this machine, and nothing else.
      const put = (block: string) =>
        block
          .replace('export BASE=http://localhost:8080/v1', `export BASE=http://localhost:${port}/v1`)
          .replace(/^export KEY=sk_test_….*$/m, `export KEY=${key}`)
          .replaceAll('listen(9000)', `listen(${hookPort})`)
          .replaceAll('127.0.0.1:9000', `127.0.0.1:${hookPort}`)
          .replaceAll('/tmp/', `${dir}/`);
      const script = ['set -euo pipefail', ...blocks.map((b, i) => `echo '::block ${i + 1}::'\n${put(b)}`), "echo '::done::'"].join('\n');
      const run = await runBash(script, { DATABASE_URL: env.DATABASE_URL }, 180_000);
      assert.equal(run.code, 0, `the walkthrough stopped (exit ${run.code}) after ${run.stdout.match(/::block \d+::/g)?.at(-1)}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
      assert.match(run.stdout, /::done::/);
      const printed = run.stdout.split('::block ').slice(1);
      blocks.forEach((block, i) => {
        // A block's last answer ends its line, so the reader's next prompt starts on a line of its own.
        assert.ok(printed[i]!.endsWith('\n'), `block ${i + 1} ends its last line:\n${printed[i]}`);
        const lines = printed[i]!.split('\n');
        for (const answer of shownAnswers(block)) assert.ok(lines.some((line) => answer.test(line)), `block ${i + 1} prints ${answer}:\n${printed[i]}`);
      });
      // Nothing came back empty where an id was kept for the next step.
      assert.doesNotMatch(run.stdout, /^null$/m, run.stdout);
      for (const file of ['label.pdf', 'label.png', 'logo.png', 'print.pdf', 'cn22.pdf', 'return.pdf', 'scan-form.pdf', 'stamp.png']) {
        assert.ok(existsSync(join(dir, file)), `${file} was saved`);
      }
      assert.equal(readFileSync(join(dir, 'label.pdf')).subarray(0, 5).toString(), '%PDF-');
      assert.deepEqual([...readFileSync(join(dir, 'label.png')).subarray(1, 4)], [0x50, 0x4e, 0x47]);
    } finally {
      service.process.kill('SIGTERM');
      await service.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
