import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forEachDatabase, startTestApp, withTestApp } from '../helpers.ts';
import { authenticateUser, createUser, MIN_PASSWORD_LENGTH } from '../../src/oauth/users.ts';
import type { AppError } from '../../src/errors.ts';

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('users of an account', () => {
    it('stores the email lower-cased and the password only as an scrypt hash', async () => {
      const user = await createUser(t.ctx.db, t.accountId, '  Ada.Lovelace@Example.COM ', 'analytical engine');
      assert.equal(user.email, 'ada.lovelace@example.com');
      const row = await t.ctx.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(row.account_id, t.accountId);
      assert.match(row.password_hash, /^scrypt\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
      assert.ok(!row.password_hash.includes('analytical'));
    });

    it('keeps emails unique regardless of case, across accounts', async () => {
      await createUser(t.ctx.db, t.accountId, 'grace@example.com', 'compiler first');
      const other = await t.newAccount();
      await assert.rejects(createUser(t.ctx.db, other.accountId, 'GRACE@example.com', 'compiler second'), (err: AppError) => err.status === 409 && /already exists/.test(err.message));
    });

    it(`refuses a malformed email and a password shorter than ${MIN_PASSWORD_LENGTH} characters`, async () => {
      await assert.rejects(createUser(t.ctx.db, t.accountId, 'not-an-email', 'long enough password'), (err: AppError) => err.code === 'INVALID_INPUT');
      await assert.rejects(createUser(t.ctx.db, t.accountId, 'short@example.com', 'short'), (err: AppError) => err.code === 'INVALID_INPUT' && /at least 10/.test(err.message));
    });

    it('authenticates by email in any case and the right password only', async () => {
      const user = await createUser(t.ctx.db, t.accountId, 'katherine@example.com', 'trajectories');
      assert.equal((await authenticateUser(t.ctx.db, 'Katherine@Example.com', 'trajectories'))?.id, user.id);
      assert.equal(await authenticateUser(t.ctx.db, 'katherine@example.com', 'Trajectories'), null);
      assert.equal(await authenticateUser(t.ctx.db, 'nobody@example.com', 'trajectories'), null);
    });
  });
});

describe('npm run admin -- user create', () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-admin-'));
    env = { ...(process.env as Record<string, string>), APP_ENV: 'development', DATABASE_URL: `sqlite:${join(dir, 'admin.db')}`, LOG_LEVEL: 'warn' };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const admin = (args: string[], input = '') => spawnSync(process.execPath, ['src/cli/admin.ts', ...args], { env, input, encoding: 'utf8', cwd: new URL('../../', import.meta.url).pathname });

  it('reads the password from standard input and prints {id} with --json; the user can then sign in', async () => {
    const account = admin(['account', 'create', 'warehouse', '--json']);
    assert.equal(account.status, 0, account.stderr);
    const created = admin(['user', 'create', '--account', 'warehouse', '--email', 'Ops@Example.com', '--json'], 'a password from stdin\n');
    assert.equal(created.status, 0, created.stderr);
    const out = JSON.parse(created.stdout);
    assert.deepEqual(Object.keys(out), ['id']);
    assert.match(out.id, /^[0-9a-f-]{36}$/);

    const again = admin(['user', 'create', '--account', 'warehouse', '--email', 'ops@example.com', '--json'], 'another password\n');
    assert.equal(again.status, 2);
    assert.match(JSON.parse(again.stdout).error, /already exists/);

    const t = await startTestApp({ name: 'sqlite', url: env.DATABASE_URL! });
    try {
      const user = await authenticateUser(t.ctx.db, 'ops@example.com', 'a password from stdin');
      assert.equal(user?.id, out.id);
    } finally {
      await t.close();
    }
  });

  it('refuses piped input of more than one line, naming why, and creates nobody', () => {
    const res = admin(['user', 'create', '--account', 'warehouse', '--email', 'two@example.com', '--json'], 'a password from stdin\nnpm run admin -- client create\n');
    assert.equal(res.status, 2, res.stderr);
    assert.match(JSON.parse(res.stdout).error, /the password is one line/);
    // Nobody was created: the same email is free.
    assert.equal(admin(['user', 'create', '--account', 'warehouse', '--email', 'two@example.com', '--json'], 'one line only\n').status, 0);
  });

  it('at a terminal, reads one line typed after a prompt without showing it (Backspace and Ctrl-U take back, an arrow key is ignored)', async () => {
    // `script` gives the command a terminal; the line is typed once the prompt is there, as a person would.
    const command = [process.execPath, '--disable-warning=ExperimentalWarning', 'src/cli/admin.ts', 'user', 'create', '--account', 'warehouse', '--email', 'tty@example.com', '--json'].join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { env, cwd: new URL('../../', import.meta.url).pathname, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let typed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (!typed && out.includes('password: ')) {
        typed = true;
        // A false start taken back with Ctrl-U, a character with Backspace; an arrow key (ESC [ D) and
        // Alt-x (ESC x) are no part of it, though they come in one chunk with the rest.
        child.stdin.write('wrong start\u0015typed at a \u001b[Dterminal\u001bx 1\u007f2\r');
      }
    });
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 0, out);
    assert.ok(!out.includes('typed at'), `the password is not shown: ${JSON.stringify(out)}`);
    const id = JSON.parse(out.slice(out.indexOf('{'))).id;
    const t = await startTestApp({ name: 'sqlite', url: env.DATABASE_URL! });
    try {
      assert.equal((await authenticateUser(t.ctx.db, 'tty@example.com', 'typed at a terminal 2'))?.id, id);
    } finally {
      await t.close();
    }
  });
});
