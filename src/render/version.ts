// The renderer's version: a hash of the render code (with the shared code it draws from) and of the
// libraries it draws with. A stored document is keyed by it, so a change to either never serves a
// document drawn by the old renderer.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { findPackageJSON } from 'node:module';

const LIBRARIES = ['bwip-js', 'pdfkit', 'fontkit', 'sharp', 'dejavu-fonts-ttf', '@expo-google-fonts/noto-sans-sc', '@expo-google-fonts/noto-sans-kr', '@fragaria/address-formatter'];
/**
 * Files outside this folder whose code changes what is drawn (country names, postal codes' spelling,
 * customs totals and currency decimals, tracking numbers' groups: carriers/index.ts and the carrier
 * files behind it); test/render/renderer.test.ts checks that every such import is here.
 */
export const SHARED = ['../countries.ts', '../carriers/customs.ts', '../carriers/index.ts', '../carriers/rules.ts', '../carriers/ups.ts', '../carriers/usps.ts', '../carriers/fedex.ts', '../carriers/dhl.ts'];

/** The version of the renderer whose code is in `dir` (this folder). */
export function rendererVersion(dir: URL = new URL('./', import.meta.url)): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!/\.(ts|js|json)$/.test(entry)) continue;
    hash.update(`${entry}\n`).update(readFileSync(new URL(entry, dir)));
  }
  for (const file of SHARED) hash.update(`${file}\n`).update(readFileSync(new URL(file, import.meta.url)));
  for (const name of LIBRARIES) {
    const { version } = JSON.parse(readFileSync(findPackageJSON(name, import.meta.url)!, 'utf8')) as { version: string };
    hash.update(`${name}@${version}\n`);
  }
  return hash.digest('base64url').slice(0, 16);
}

export const RENDERER_VERSION = rendererVersion();
