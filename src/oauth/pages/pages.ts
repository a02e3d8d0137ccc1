// The HTML of the authorization pages: sign-in, consent, error. Plain forms, no script, one
// same-origin stylesheet; every dynamic value goes through `esc`.
import { readFileSync } from 'node:fs';
import { escapeHtml as esc } from '../../http/html.ts';
import { SCOPE_DESCRIPTIONS, type Scope } from '../../auth/scopes.ts';

export const STYLESHEET = readFileSync(new URL('./authorize.css', import.meta.url), 'utf8');
const SERVICE_NAME = 'Shipping';


export interface PagePaths {
  stylesheet: string;
  signIn: string;
  consent: string;
}

function layout(paths: PagePaths, title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · ${SERVICE_NAME}</title>
<link rel="stylesheet" href="${esc(paths.stylesheet)}">
</head>
<body>
<main>
<p class="brand">${SERVICE_NAME}</p>
${body}
</main>
</body>
</html>
`;
}

function hidden(requestId: string, csrfToken: string): string {
  return `<input type="hidden" name="request" value="${esc(requestId)}">
<input type="hidden" name="csrf_token" value="${esc(csrfToken)}">`;
}

function alert(message: string | undefined): string {
  return message ? `<p class="alert" role="alert" id="form-error">${esc(message)}</p>\n` : '';
}

export interface SignInPage {
  clientName: string;
  requestId: string;
  csrfToken: string;
  email?: string;
  error?: string;
}

export function signInPage(paths: PagePaths, p: SignInPage): string {
  const described = p.error ? ' aria-describedby="form-error"' : '';
  return layout(
    paths,
    'Sign in',
    `<h1>Sign in</h1>
<p class="lead">to continue to <span class="client">${esc(p.clientName)}</span></p>
${alert(p.error)}<form method="post" action="${esc(paths.signIn)}" novalidate>
${hidden(p.requestId, p.csrfToken)}
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="username" required${p.email ? '' : ' autofocus'} value="${esc(p.email ?? '')}"${described}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${p.email ? ' autofocus' : ''}${described}>
<button type="submit">Sign in</button>
</form>
<p class="fine">Only sign in if you started this from ${esc(p.clientName)}.</p>`,
  );
}

export interface ConsentPage {
  clientName: string;
  requestId: string;
  csrfToken: string;
  scopes: Scope[];
  email: string;
  accountName: string;
  /** Where the browser returns to, shown so the user knows. */
  returnHost: string;
}

export function consentPage(paths: PagePaths, p: ConsentPage): string {
  const items = p.scopes.map((s) => `<li>${esc(SCOPE_DESCRIPTIONS[s] ?? s)} <code>${esc(s)}</code></li>`).join('\n');
  return layout(
    paths,
    `Allow ${p.clientName}?`,
    `<h1>Allow <span class="client">${esc(p.clientName)}</span> to use your account?</h1>
<p class="who">Signed in as <strong>${esc(p.email)}</strong><br>Account <strong>${esc(p.accountName)}</strong></p>
<h2 id="scopes-heading">${esc(p.clientName)} will be able to:</h2>
<ul class="scopes" aria-labelledby="scopes-heading">
${items}
</ul>
<form method="post" action="${esc(paths.consent)}">
${hidden(p.requestId, p.csrfToken)}
<div class="actions">
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="approve">Allow</button>
</div>
</form>
<p class="fine">Either way you will return to ${esc(p.returnHost)}. If you deny, nothing is shared.</p>`,
  );
}

export function errorPage(paths: PagePaths, title: string, message: string): string {
  return layout(
    paths,
    title,
    `<h1>${esc(title)}</h1>
<p class="alert" role="alert">${esc(message)}</p>
<p class="fine">You can close this page.</p>`,
  );
}
