// The live OpenAPI document, as generators and readers meet it: Redocly's recommended rules and
// Spectral's spectral:oas find nothing (a rule is off or a finding excused only in the lint configs,
// with its reason), every operation has a stable operationId and declared tags, and every scope an
// operation asks for is declared by the OAuth 2.0 scheme.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { liveDocument } from '../../clients/typescript/generate.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'node_modules', '.bin');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

interface Operation {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  responses?: Record<string, unknown>;
  requestBody?: { content?: Record<string, { example?: unknown; examples?: Record<string, unknown> }> };
}

describe('the OpenAPI document', () => {
  let doc: Record<string, any>;
  let dir: string;
  const operations: [string, string, Operation][] = [];

  before(async () => {
    doc = await liveDocument();
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
    for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml', '.spectral.yaml']) copyFileSync(join(ROOT, file), join(dir, file));
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) operations.push([method, path, op]);
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('passes Redocly\'s recommended rules with no error and no warning', async () => {
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const out = await run(join(BIN, 'redocly'), ['lint', 'openapi.json', '--format=json'], { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 }).catch((err: { stdout: string; stderr: string }) => err);
    const report = JSON.parse(out.stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
    const found = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.deepEqual(found, []);
    assert.equal(report.totals.errors + report.totals.warnings, 0);
    // The excused findings are the ones the ignore file names, no more.
    assert.equal(report.totals.ignored, 12);
  });

  it('passes Spectral\'s spectral:oas with no error and no warning', async () => {
    const out = await run(join(BIN, 'spectral'), ['lint', 'openapi.json', '--format=json', '--fail-severity=warn', '--quiet'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch(
      (err: { stdout: string; code: number }) => err,
    );
    const results = JSON.parse(out.stdout || '[]') as { code: string; message: string; path: string[]; severity: number }[];
    // Severity 0 is an error, 1 a warning; hints and infos (2, 3) do not fail.
    const found = results.filter((r) => r.severity <= 1).map((r) => `${r.code}: ${r.message} at ${r.path.join('.')}`);
    assert.deepEqual(found, []);
  });

  it('names every operation with a unique camelCase operationId', () => {
    assert.ok(operations.length >= 29, `${operations.length} operations`);
    const ids = operations.map(([method, path, op]) => {
      assert.match(op.operationId ?? '', /^[a-z][a-zA-Z]+$/, `${method} ${path}`);
      return op.operationId!;
    });
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    // The names client SDKs get: a few that must never change silently.
    const byRoute = new Map(operations.map(([method, path, op]) => [`${method} ${path}`, op.operationId]));
    assert.equal(byRoute.get('post /v1/shipments'), 'createShipment');
    assert.equal(byRoute.get('post /v1/labels'), 'createLabel');
    assert.equal(byRoute.get('put /v1/stamps/{id}/invalid'), 'invalidateStamps');
    assert.equal(byRoute.get('get /v1/labels/{id}/trackingnumber'), 'getLabelTracking');
  });

  it('declares every tag it uses, with a description', () => {
    const declared = new Map((doc.tags as { name: string; description?: string }[]).map((t) => [t.name, t.description]));
    for (const [method, path, op] of operations) {
      assert.ok(op.tags?.length, `${method} ${path} has a tag`);
      for (const tag of op.tags!) assert.ok(declared.get(tag), `${method} ${path}: tag ${tag} is declared with a description`);
    }
  });

  it('declares the scopes of every operation on the OAuth 2.0 scheme, which offers both flows', () => {
    const oauth2 = doc.components.securitySchemes.oauth2;
    const declared = Object.keys(oauth2.flows.clientCredentials.scopes);
    assert.deepEqual(Object.keys(oauth2.flows.authorizationCode.scopes), declared);
    let scoped = 0;
    for (const [method, path, op] of operations) {
      for (const requirement of op.security ?? []) {
        for (const [scheme, scopes] of Object.entries(requirement)) {
          assert.ok(doc.components.securitySchemes[scheme], `${method} ${path}: scheme ${scheme} is declared`);
          if (scheme !== 'oauth2') assert.deepEqual(scopes, [], `${method} ${path}: only oauth2 lists scopes`);
          for (const scope of scopes) assert.ok(declared.includes(scope), `${method} ${path}: scope ${scope} is declared`);
          if (scheme === 'oauth2' && scopes.length) scoped++;
        }
      }
    }
    assert.ok(scoped >= 18, `${scoped} operations name their scope`);
  });

  it('gives every JSON request body an example, and the document a licence and a server', () => {
    for (const [method, path, op] of operations) {
      const json = op.requestBody?.content?.['application/json'];
      if (json) assert.ok(json.example !== undefined || Object.keys(json.examples ?? {}).length > 0, `${method} ${path} has an example body`);
    }
    assert.ok(doc.info.license?.name);
    assert.ok(doc.servers?.[0]?.url);
  });

  it('describes every response in words of its own or its status, never Fastify\'s "Default Response"', () => {
    for (const [method, path, op] of operations) {
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, { description?: string }][]) {
        assert.ok(response.description && response.description !== 'Default Response', `${method} ${path} ${status}: ${response.description}`);
      }
    }
  });
});
