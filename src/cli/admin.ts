// `npm run admin -- <command>`: accounts, API keys, OAuth clients and users, scriptable with --json.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, DEFAULT_DATABASE_URL, loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { closeContext, databaseProblem, openContext } from '../bootstrap.ts';
import { AppError, InvalidInput, NotFound } from '../errors.ts';
import { apiKeyName, createAccount, createApiKey, createClient, findAccount, keyNameProblem, listAccounts, listApiKeys, listClients, resolveScopes, revokeApiKey, revokeClient, rotateClientSecret } from '../auth/credentials.ts';
import { revokeGrants } from '../oauth/authorize.ts';
import { createUser, disableUser } from '../oauth/users.ts';
import type { AppContext } from '../context.ts';
import { isUniqueViolation } from '../db/index.ts';

const USAGE = `usage: npm run admin -- <command> [options] [--json]

  account create <name>                         create an account; prints its id
  account list                                  list accounts
  key create --account <id|name> [--scopes "…"] [--name <what it is for>]
                                                create an API key; prints it once
  key list [--account <id|name>]                list keys: display prefix, name, account, state, scopes (never the key)
  key revoke <prefix>                           revoke the key starting with <prefix>
  client create --account <id|name> [--scopes "…"] [--name <n>] [--redirect-uri <uri>]…
                                                create an OAuth client; prints id and secret once
  client list [--account <id|name>]             list OAuth clients (never their secrets)
  client revoke <client_id>                     the client gets no more tokens; its grants end
  client rotate-secret <client_id>              a new secret, printed once; the old one stops working
  user create --account <id|name> --email <e>   create a user who signs in to the dashboard and the consent page;
                                                the password: typed after a prompt (not shown), or one line piped in
  user disable --email <e>                      the user can no longer sign in; the grants they gave and their dashboard sessions end
  keys rotate <access_token|stamp>              start signing with a new key (old ones stay published)

Settings come from the environment (DATABASE_URL, APP_ENV, …) exactly as for npm start.`;

/** Extra commands from other capabilities (e.g. users for the OAuth sign-in), keyed "noun verb". */
export type AdminCommand = (ctx: AppContext, args: { positionals: string[]; values: Record<string, unknown> }) => Promise<Record<string, unknown>>;
export const extraCommands = new Map<string, AdminCommand>();

/**
 * The password of `user create`, one line: at a terminal typed after a prompt and not shown (Enter
 * ends it, Ctrl-C gives up); piped in, the whole of standard input, its last newline dropped.
 */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) return typedSecretLine('password: ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (/[\r\n]/.test(text)) throw new AppError(400, 'INVALID_INPUT', 'the password is one line, and standard input held more than one');
  return text;
}

/** Signals that end the process while it waits for a password at the terminal. */
const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];

/**
 * A line typed at the terminal without echo: Enter ends it, Backspace takes back a character and
 * Ctrl-U the whole line; keys that send escape sequences (arrows, Home, F1) and other control
 * characters are no part of it. Ctrl-C interrupts (the shell sees 130), Ctrl-D or the end of input
 * with nothing typed gives up.
 */
function typedSecretLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let typed = '';
    const end = (err?: Error) => {
      stdin.off('data', onData);
      stdin.off('end', gaveUp);
      stdin.off('error', failed);
      for (const signal of SIGNALS) process.off(signal, onSignal);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const gaveUp = () => end(new AppError(400, 'INVALID_INPUT', 'no password was typed'));
    const failed = (err: Error) => end(err);
    // An escape sequence, however the keys arrive in chunks: ESC [ … up to a final byte (@ to ~), ESC O
    // and one more, or ESC and one character (Alt with a key).
    let inSequence: 'none' | 'start' | 'csi' | 'ss3' = 'none';
    const onData = (text: string) => {
      for (const ch of text) {
        if (inSequence === 'start') {
          inSequence = ch === '[' ? 'csi' : ch === 'O' ? 'ss3' : 'none';
          continue;
        }
        if (inSequence === 'csi') {
          if (ch >= '@' && ch <= '~') inSequence = 'none';
          continue;
        }
        if (inSequence === 'ss3') {
          inSequence = 'none';
          continue;
        }
        if (ch === '\u001b') {
          inSequence = 'start';
          continue;
        }
        if (ch === '\r' || ch === '\n') return end();
        if (ch === '\u0003') {
          end(new AppError(400, 'INVALID_INPUT', 'interrupted'));
          return void process.kill(process.pid, 'SIGINT');
        }
        if (ch === '\u0004') return typed ? end() : gaveUp();
        if (ch === '\u0015') typed = '';
        else if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else if (ch >= ' ') typed += ch;
      }
    };
    // Ended by a signal while it waits, the terminal is given back as it was first.
    const onSignal = (signal: NodeJS.Signals) => {
      end(new AppError(400, 'INVALID_INPUT', `interrupted (${signal})`));
      process.kill(process.pid, signal);
    };
    stdin.on('data', onData);
    stdin.on('end', gaveUp);
    stdin.on('error', failed);
    for (const signal of SIGNALS) process.once(signal, onSignal);
    stdin.resume();
  });
}

async function run(ctx: AppContext, argv: string[]): Promise<{ json: Record<string, unknown>; text: string }> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      email: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const [noun, verb, arg] = positionals;
  const live = ctx.config.env === 'production';
  const account = async () => {
    if (!values.account) throw new AppError(400, 'INVALID_INPUT', '--account is required');
    return findAccount(ctx.db, values.account);
  };
  switch (`${noun} ${verb}`) {
    case 'account create': {
      if (!arg) throw new AppError(400, 'INVALID_INPUT', 'give the account a name');
      const a = await createAccount(ctx.db, arg).catch((err: unknown) => {
        throw isUniqueViolation(err) ? new AppError(409, 'CONFLICT', `an account named ${arg} already exists`) : err;
      });
      return { json: { id: a.id }, text: `account ${a.name}: ${a.id}` };
    }
    case 'account list': {
      const accounts = await listAccounts(ctx.db);
      return { json: { accounts }, text: accounts.map((a) => `${a.id}  ${a.name}`).join('\n') };
    }
    case 'key create': {
      const a = await account();
      const name = apiKeyName(values.name);
      const taken = await keyNameProblem(ctx.db, a.id, name);
      if (taken) throw new InvalidInput(`name ${taken}`, [{ field: 'name', message: taken }]);
      const k = await createApiKey(ctx.db, a.id, resolveScopes(values.scopes), live, { name });
      return { json: { key: k.key }, text: `API key${name ? ` "${name}"` : ''} for ${a.name} (shown once, keep it):\n${k.key}` };
    }
    case 'key list': {
      const rows = await listApiKeys(ctx.db, values.account ? (await account()).id : undefined);
      return {
        json: { keys: rows.map((r) => ({ prefix: r.prefix, name: r.name, account: r.account, scopes: r.scopes, createdAt: r.created_at, revokedAt: r.revoked_at })) },
        text: rows.map((r) => `${r.prefix}…  ${r.name ? `"${r.name}"` : '-'}  ${r.account}  ${r.revoked_at ? `revoked ${r.revoked_at}` : 'active'}  ${r.scopes}`).join('\n'),
      };
    }
    case 'key revoke': {
      if (!arg) throw new AppError(400, 'INVALID_INPUT', 'give the key prefix shown by key list');
      let revoked: { prefix: string; name: string };
      try {
        revoked = await revokeApiKey(ctx.db, arg);
      } catch (err) {
        // Only active keys are revoked: one revoked earlier is named as such, not as unknown.
        const earlier = err instanceof NotFound ? (await listApiKeys(ctx.db)).find((k) => k.revoked_at && (k.prefix.startsWith(arg) || arg.startsWith(k.prefix))) : undefined;
        if (!earlier) throw err;
        return { json: { revoked: earlier.prefix, alreadyRevoked: true }, text: `api key ${earlier.prefix}…${earlier.name ? ` "${earlier.name}"` : ''} was already revoked on ${earlier.revoked_at}; nothing changed` };
      }
      return { json: { revoked: revoked.prefix }, text: `revoked ${revoked.prefix}…${revoked.name ? ` "${revoked.name}"` : ''}` };
    }
    case 'client create': {
      const a = await account();
      const c = await createClient(ctx.db, a.id, { scopes: resolveScopes(values.scopes), redirectUris: values['redirect-uri'] ?? [], name: values.name, allowPlainHttp: ctx.config.env === 'development' });
      return { json: { clientId: c.clientId, clientSecret: c.clientSecret }, text: `client_id:     ${c.clientId}\nclient_secret: ${c.clientSecret}  (shown once)` };
    }
    case 'client list': {
      const clients = await listClients(ctx.db, values.account ? (await account()).id : undefined);
      return {
        json: { clients },
        text: clients
          .map((c) => `${c.clientId}  ${c.name === c.clientId ? '' : `${c.name}  `}${c.revokedAt ? `revoked ${c.revokedAt}` : 'active'}  scopes: ${c.scopes}  redirect URIs: ${c.redirectUris.join(' ') || 'none'}`)
          .join('\n'),
      };
    }
    case 'client revoke': {
      if (!arg) throw new AppError(400, 'INVALID_INPUT', 'give the client_id shown by client list');
      await revokeClient(ctx.db, arg);
      const grants = await revokeGrants(ctx, { clientId: arg }, 'client revoked');
      return { json: { revoked: arg, grantsEnded: grants }, text: `revoked ${arg}; ${grants} grant(s) ended` };
    }
    case 'client rotate-secret': {
      if (!arg) throw new AppError(400, 'INVALID_INPUT', 'give the client_id shown by client list');
      const clientSecret = await rotateClientSecret(ctx.db, arg);
      return { json: { clientId: arg, clientSecret }, text: `client_id:     ${arg}\nclient_secret: ${clientSecret}  (shown once; the old one no longer works)` };
    }
    case 'user disable': {
      if (!values.email) throw new AppError(400, 'INVALID_INPUT', '--email is required');
      const userId = await disableUser(ctx.db, values.email);
      const grants = await revokeGrants(ctx, { userId }, 'user disabled');
      return { json: { disabled: userId, grantsEnded: grants }, text: `disabled ${values.email}; ${grants} grant(s) ended` };
    }
    case 'user create': {
      const a = await account();
      if (!values.email) throw new AppError(400, 'INVALID_INPUT', '--email is required');
      const user = await createUser(ctx.db, a.id, values.email, await readPassword());
      return { json: { id: user.id }, text: `user ${user.email} of ${a.name}: ${user.id}` };
    }
    case 'keys rotate': {
      if (arg !== 'access_token' && arg !== 'stamp') throw new AppError(400, 'INVALID_INPUT', 'rotate access_token or stamp');
      const kid = await ctx.keys.rotate(arg);
      return { json: { kid }, text: `now signing ${arg} with key ${kid}` };
    }
  }
  const extra = extraCommands.get(`${noun} ${verb}`);
  if (extra) {
    const v: Record<string, unknown> = { ...values };
    if (noun === 'user' && verb === 'create') v.password = await readPassword();
    const json = await extra(ctx, { positionals, values: v });
    return { json, text: Object.entries(json).map(([k, val]) => `${k}: ${String(val)}`).join('\n') };
  }
  throw new AppError(400, 'INVALID_INPUT', `unknown command "${[noun, verb].filter(Boolean).join(' ')}"\n${USAGE}`);
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  let ctx: AppContext | undefined;
  let databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  try {
    const config = loadConfig(process.env, version);
    databaseUrl = config.databaseUrl;
    ctx = await openContext(config, createLogger('warn', process.stderr as never));
    const { json: out, text } = await run(ctx, argv);
    process.stdout.write(`${json ? JSON.stringify(out) : text}\n`);
    return 0;
  } catch (err) {
    // The database refused or out of reach: the service's own line and exit code (78 or 69).
    const problem = databaseProblem(err, databaseUrl);
    if (problem) {
      if (json) process.stdout.write(`${JSON.stringify({ error: problem.message })}\n`);
      else process.stderr.write(`${problem.message}\n`);
      return problem.exitCode;
    }
    const message = err instanceof AppError || err instanceof ConfigError ? err.message : (err as Error).message;
    if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    else process.stderr.write(`error: ${message}\n`);
    return err instanceof AppError || err instanceof ConfigError || err instanceof TypeError ? 2 : 1;
  } finally {
    if (ctx) await closeContext(ctx);
  }
}

process.exitCode = await main();
