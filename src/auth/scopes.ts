// Scopes in their canonical `action:resource` form (docs/authentication.md); `resource:action` is an alias.
export const ALL_SCOPES = [
  'read:labels',
  'write:labels',
  'read:stamps',
  'write:stamps',
  'read:shipments',
  'write:shipments',
  'read:webhooks',
  'write:webhooks',
  'write:tracking',
] as const;
export type Scope = (typeof ALL_SCOPES)[number];

const known = new Set<string>(ALL_SCOPES);

/** The canonical form of one scope, or null when it is not one of ours. */
export function canonicalScope(scope: string): Scope | null {
  if (known.has(scope)) return scope as Scope;
  const [a, b] = scope.split(':');
  const flipped = `${b}:${a}`;
  return known.has(flipped) ? (flipped as Scope) : null;
}

/** Parses a space-separated scope string; returns the canonical scopes and the ones not recognised. */
export function parseScopes(text: string): { scopes: Scope[]; unknown: string[] } {
  const scopes = new Set<Scope>();
  const unknown: string[] = [];
  for (const s of text.split(/[\s,]+/).filter(Boolean)) {
    const c = canonicalScope(s);
    if (c) scopes.add(c);
    else unknown.push(s);
  }
  return { scopes: [...scopes], unknown };
}

export function scopeString(scopes: Iterable<string>): string {
  return [...scopes].join(' ');
}

/** Plain-language descriptions, used by the consent page and the docs. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'read:labels': 'See your labels and their tracking',
  'write:labels': 'Create and invalidate labels',
  'read:stamps': 'See your stamps',
  'write:stamps': 'Create and invalidate stamps',
  'read:shipments': 'See your shipments',
  'write:shipments': 'Create shipments',
  'read:webhooks': 'See your webhooks and their deliveries',
  'write:webhooks': 'Create, change and delete webhooks',
  'write:tracking': 'Report tracking events',
};
