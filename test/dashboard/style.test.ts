// The stylesheet's focus rings stand out from what they are drawn on: at least 3:1 (WCAG 2.2, 1.4.11),
// on the page and on the navy header, where the page's ring would not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const css = readFileSync(new URL('../../src/dashboard/assets/dashboard.css', import.meta.url), 'utf8');

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a: string, b: string) => (Math.max(luminance(a), luminance(b)) + 0.05) / (Math.min(luminance(a), luminance(b)) + 0.05);
const colour = (pattern: RegExp) => {
  const m = pattern.exec(css);
  assert.ok(m, `${pattern} is in the stylesheet`);
  return m[1]!;
};

test('focus rings have at least 3:1 against the page and against the header', () => {
  const ring = colour(/:focus-visible \{ outline: \d+px solid (#[0-9a-f]{6})/);
  const page = colour(/html \{[^}]*background: (#[0-9a-f]{6})/);
  const header = colour(/header \{[^}]*background: (#[0-9a-f]{6})/);
  const headerRing = colour(/header :focus-visible \{ outline-color: (#[0-9a-f]{6})/);
  assert.ok(contrast(ring, page) >= 3, `the ring ${ring} on the page ${page}: ${contrast(ring, page).toFixed(2)}`);
  assert.ok(contrast(headerRing, header) >= 3, `the ring ${headerRing} on the header ${header}: ${contrast(headerRing, header).toFixed(2)}`);
});
