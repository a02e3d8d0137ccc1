// API keys in the dashboard: the account's keys (display prefix only), a form to create one and a
// button to revoke one. A new key is shown once, in the answer to the form that created it; it is
// never put in a URL, a redirect or a log, and only its hash is stored (auth/credentials.ts). The
// form sent again makes no second key, and is told which key the first made; the key itself only
// while the browser still holds the first answer's cookie, since the service keeps no copy of it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_NAME_MAX, createApiKey, keyNameAsTyped, keyNameProblem, listApiKeys, revokeAccountApiKey } from '../auth/credentials.ts';
import { ALL_SCOPES, canonicalScope, SCOPE_DESCRIPTIONS, type Scope } from '../auth/scopes.ts';
import { InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import { onceForForm, type FormSending } from '../http/idempotency.ts';
import { idParams } from '../http/schemas.ts';
import { actionButton, confirmation, csrfField, errorSummary, field, fieldErrors, fieldId, formKeyField, formKeyOf, html, Html, table, time } from './html.ts';
import { PAGE, sentAgain, type Dashboard } from './routes.ts';

/** A key made a moment ago, in the page that answers its form. */
interface NewKey {
  /** The key's row (no secret): tells a form sent again whether this is the key it made. */
  id: string;
  key: string;
  name: string;
  scopes: readonly Scope[];
}

interface KeysView {
  /** The name and the scopes ticked in the form. */
  name?: string;
  checked?: readonly string[];
  problems?: FieldProblem[];
  created?: NewKey;
  /** The create form's key (onceForForm): new when the page is shown, kept while the form comes back refused. */
  formKey?: string;
  notice?: string;
  status?: number;
}

/** The cookie, beside the new key's, that tells the new key's page a form was sent again (the made key's id). */
const SENT_AGAIN = 'again';

/** A key's scopes as people read them: "all scopes", or the list. */
function scopesText(scopes: readonly string[]): string {
  return ALL_SCOPES.every((s) => scopes.includes(s)) ? 'all scopes' : scopes.join(', ');
}

function scopesFieldset(checked: readonly string[], error: string | undefined): Html {
  const id = fieldId('scopes');
  return html`<fieldset id="${id}" class="checks${error ? ' invalid' : ''}"${error ? new Html(` aria-describedby="${id}-error"`) : ''}>
<legend>Scopes</legend>
<p class="hint">What requests with the key may do. A key holds every scope unless you take some away.</p>
${ALL_SCOPES.map((scope) => {
  const box = fieldId(`scopes-${scope}`);
  return html`<label for="${box}"><input type="checkbox" id="${box}" name="scopes" value="${scope}"${checked.includes(scope) ? new Html(' checked') : ''}> <span><code>${scope}</code>: ${SCOPE_DESCRIPTIONS[scope]}</span></label>`;
})}
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</fieldset>`;
}

function newKeyBox(created: NewKey): Html {
  return html`<section class="new-key" aria-labelledby="new-key-heading">
<h2 id="new-key-heading">Your new API key, ${created.name}</h2>
<p role="alert"><strong>Copy the key now: it will not be shown again.</strong> Only a hash of it is stored, so nobody can show it to you later. If you lose it, revoke it and create another.</p>
<p class="secret" id="new-key"><code>${created.key}</code></p>
<p>Send it in the <code>X-API-Key</code> header of every request. Its scopes: ${scopesText(created.scopes)}.</p>
</section>`;
}

export function keyPages(app: FastifyInstance, d: Dashboard): void {
  const live = d.ctx.config.env === 'production';
  const keyStart = live ? 'sk_live_' : 'sk_test_';

  const keysPage = async (request: FastifyRequest, reply: FastifyReply, view: KeysView = {}): Promise<FastifyReply> => {
    const user = d.user(request);
    const keys = await listApiKeys(d.ctx.db, user.accountId);
    const problems = view.problems ?? [];
    const scopesError = problems.find((p) => p.field === 'scopes')?.message;
    return d.send(request, reply, {
      title: view.created ? 'New API key' : 'API keys',
      section: 'keys',
      ...(view.status ? { status: view.status } : {}),
      ...(view.notice ? { notice: view.notice } : {}),
      body: (token) => html`<h1>API keys</h1>
${view.created ? newKeyBox(view.created) : ''}
<section aria-labelledby="keys-list">
<h2 id="keys-list">Keys of ${user.accountName}</h2>
${table(
  'API keys, oldest first',
  ['Name', 'Key', 'Scopes', 'Created', 'State', 'Action'],
  keys.map((k) => [
    html`${k.name || '—'}`,
    html`<code id="key-${k.id}">${k.prefix}…</code>`,
    html`${scopesText(k.scopes.split(' ').filter(Boolean))}`,
    time(k.created_at),
    k.revoked_at ? html`Revoked ${time(k.revoked_at)}` : html`Active`,
    k.revoked_at ? html`—` : actionButton(`${d.base}/keys/${k.id}/revoke`, `Revoke ${k.name ? `“${k.name}” ` : ''}${k.prefix}…`, token, {}, true),
  ]),
  'No API keys yet.',
)}
<p class="hint">Revoking a key is immediate and cannot be undone: requests with it are refused from then on.</p>
</section>
<section aria-labelledby="keys-create">
<h2 id="keys-create">Create a key</h2>
${errorSummary(problems, undefined, new Map([['name', 'Name'], ['scopes', 'Scopes']]))}
<form method="post" action="${d.base}/keys" novalidate>
${csrfField(token)}
${formKeyField(formKeyOf(view.formKey))}
${field({ label: 'Name', name: 'name', value: view.name ?? '', required: true, maxLength: API_KEY_NAME_MAX, hint: 'What uses the key (the store\'s checkout, the packing station\'s printer), so whoever revokes it knows what stops working.', errors: fieldErrors(problems) })}
${scopesFieldset(view.checked ?? ALL_SCOPES, scopesError)}
<p class="hint">Keys made here start with <code>${keyStart}</code>${live ? '' : ' (outside production)'}.</p>
<button type="submit">Create the key</button>
</form>
</section>`,
    });
  };

  app.get('/keys', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => keysPage(request, reply),
  });

  app.post('/keys', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => {
      const name = keyNameAsTyped(d.form(request).one('name'));
      const given = d.form(request).all('scopes');
      const formKey = formKeyOf(d.form(request).one('formKey'));
      const scopes = [...new Set(given.map(canonicalScope).filter((s): s is Scope => s !== null))];
      const unknown = given.filter((s) => canonicalScope(s) === null);
      const { accountId, userId } = d.user(request);
      const nameProblems = async (): Promise<FieldProblem[]> => {
        const problem = name ? await keyNameProblem(d.ctx.db, accountId, name) : 'is required: say what uses the key';
        return problem ? [{ field: 'name', message: problem }] : [];
      };
      const scopeProblems = unknown.length ? [{ field: 'scopes', message: `must be one of ${ALL_SCOPES.join(', ')}` }] : scopes.length === 0 ? [{ field: 'scopes', message: 'choose at least one scope' }] : [];
      const refused = (problems: FieldProblem[]) => keysPage(request, reply, { name, checked: scopes, problems, formKey, status: 400 });
      if (scopeProblems.length) return refused([...(await nameProblems()), ...scopeProblems]);
      // The same form sent again (a double click, Back and submit) makes no second key: its name is
      // checked within the form's one sending, so a second one is not refused for the name the first took.
      let created: Awaited<ReturnType<typeof createApiKey>> | undefined;
      let sending: FormSending;
      try {
        sending = await onceForForm(d.ctx, accountId, formKey, { name, scopes }, async () => {
          const problems = await nameProblems();
          if (problems.length) throw new InvalidInput('the key was not created', problems);
          created = await createApiKey(d.ctx.db, accountId, scopes, live, { name });
          return `/keys#key-${created.id}`;
        });
      } catch (err) {
        if (err instanceof InvalidInput) return refused(err.details ?? []);
        throw err;
      }
      if (sending.again && sending.answer === null) return sentAgain(d, reply, sending, { made: 'key', list: '/keys' });
      // The page of the new key tells it apart: the key itself while the first answer's cookie is there, else which key it was.
      if (sending.again) return d.redirectOnce(reply, '/keys/new', sending.answer!.split('#key-')[1] ?? '', SENT_AGAIN);
      request.log.info({ user: userId, key: created!.prefix }, 'dashboard api key created');
      // Shown on the page the form redirects to, once: refreshing it never makes a second key.
      return d.redirectOnce(reply, '/keys/new', JSON.stringify({ id: created!.id, key: created!.key, name, scopes }));
    },
  });

  app.get('/keys/new', {
    config: PAGE,
    schema: { hide: true },
    handler: async (request, reply) => {
      const once = d.takeOnce(request, reply, '/keys/new');
      const shown = once ? (JSON.parse(once) as NewKey) : undefined;
      // A form sent again: the key its first sending made (by id), and whether this browser still holds it.
      const again = d.takeOnce(request, reply, '/keys/new', SENT_AGAIN);
      if (shown && again === shown.id) return keysPage(request, reply, { created: shown, notice: 'This form was already sent: this is the key it made. Nothing new was created.' });
      const made = again ? (await listApiKeys(d.ctx.db, d.user(request).accountId)).find((k) => k.id === again) : undefined;
      const named = made && (made.name ? `“${made.name}” (${made.prefix}…)` : `${made.prefix}…`);
      // At most 300 characters with a name of 100, as every notice.
      const madeNotice = made && `This form was already sent: it made the key ${named}, whose secret was shown once, on the first answer. Nothing new was created. If you did not copy it, revoke it and create another.`;
      if (shown) return keysPage(request, reply, { created: shown, ...(madeNotice ? { notice: madeNotice } : {}) });
      if (made) return d.redirect(reply, `/keys#key-${made.id}`, madeNotice);
      return d.redirect(reply, '/keys', 'A new key is shown once, on the page right after its form. If you did not keep it, revoke it and create another.');
    },
  });

  app.post<{ Params: { id: string } }>('/keys/:id/revoke', {
    config: PAGE,
    schema: { hide: true, params: idParams },
    handler: async (request, reply) => {
      const { accountId, userId } = d.user(request);
      if (d.form(request).one('confirmed') !== 'yes') {
        const key = (await listApiKeys(d.ctx.db, accountId)).find((k) => k.id === request.params.id);
        if (!key) throw new NotFound('api key', request.params.id);
        if (key.revoked_at) return d.redirect(reply, '/keys', `The key ${key.prefix}… was already revoked.`);
        return d.send(request, reply, {
          title: 'Revoke the key?',
          section: 'keys',
          body: confirmation({
            question: `Revoke the key ${key.name ? `“${key.name}” (${key.prefix}…)` : `${key.prefix}…`}?`,
            consequence: 'Every request with it is refused from then on. This cannot be undone: whoever uses it needs a new key.',
            action: `${d.base}/keys/${key.id}/revoke`,
            button: `Revoke ${key.name ? `“${key.name}” ` : ''}${key.prefix}…`,
            cancel: `${d.base}/keys`,
          }),
        });
      }
      const { prefix, name } = await revokeAccountApiKey(d.ctx.db, accountId, request.params.id);
      request.log.info({ user: userId, key: prefix }, 'dashboard api key revoked');
      // Named as the list shows it (its display prefix is no secret; the notice travels in a signed cookie).
      return d.redirect(reply, '/keys', `The key ${name ? `“${name}” ` : ''}${prefix}… is revoked: requests with it are refused from now on.`);
    },
  });
}
