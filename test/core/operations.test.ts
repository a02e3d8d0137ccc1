// docs/operations.md's alert rules pass `promtool check rules` and their unit tests (ops/alerts.test.yml),
// and the rules and the Grafana dashboard only name metrics the service (or the runtime's collectors) exposes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { registry } from '../../src/metrics.ts';
import { ROOT } from './support.ts';

const run = promisify(execFile);

test('the alert rules pass promtool check rules', async () => {
  const { stdout } = await run('promtool', ['check', 'rules', join(ROOT, 'ops/alerts.yml')]).catch((err: { stdout?: string; stderr?: string; code?: string }) => {
    if (err.code === 'ENOENT') assert.fail('promtool is not installed: install the Debian package prometheus (or run .ci/run)');
    assert.fail(`promtool check rules: ${err.stdout}${err.stderr}`);
  });
  assert.match(stdout, /SUCCESS: 8 rules found/);
});

test('the alert rules do what their unit tests say (promtool test rules ops/alerts.test.yml)', async () => {
  const { stdout } = await run('promtool', ['test', 'rules', join(ROOT, 'ops/alerts.test.yml')]).catch((err: { stdout?: string; stderr?: string }) => assert.fail(`promtool test rules: ${err.stdout}${err.stderr}`));
  assert.match(stdout, /SUCCESS/);
});

test('the rules and the dashboard name only metrics that exist', () => {
  const ours = registry.getMetricsAsArray().map((m) => m.name);
  const known = (name: string) =>
    ours.some((m) => name === m || name === `${m}_bucket` || name === `${m}_count` || name === `${m}_sum`) || /^(process|nodejs)_/.test(name);
  const exprs = [
    ...[...readFileSync(join(ROOT, 'ops/alerts.yml'), 'utf8').matchAll(/expr: (.*)/g)].map((m) => m[1]!),
    ...[...readFileSync(join(ROOT, 'ops/grafana-dashboard.json'), 'utf8').matchAll(/"expr": "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!),
  ];
  assert.ok(exprs.length >= 15);
  for (const expr of exprs) {
    for (const [name] of expr.matchAll(/\b(http_request_duration_seconds\w*|shipping_\w+|process_\w+|nodejs_\w+)\b/g)) assert.ok(known(name!), `${name} in ${expr}`);
  }
  JSON.parse(readFileSync(join(ROOT, 'ops/grafana-dashboard.json'), 'utf8'));
});
