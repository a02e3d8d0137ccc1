// Helpers for the stamp tests: create a stamp through the API, fetch its signed link, and read the
// DataMatrix back from every format with independent tools (zxing-wasm, poppler, zpl-renderer-js).
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createShipment, type TestApp } from '../helpers.ts';
import { rasterizePdf, scan } from '../render/scan.ts';

export async function createStamp(t: TestApp, body: Record<string, unknown> = {}, apiKey?: string): Promise<Record<string, any>> {
  const shipmentId = body.shipmentId ?? (await createShipment(t, {}, apiKey)).id;
  const res = await t.app.inject({ method: 'POST', url: '/v1/stamps', headers: { 'x-api-key': apiKey ?? t.apiKey }, payload: { ...body, shipmentId } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** GET of a signed link exactly as a printer would send it: no credentials. */
export function fetchLink(t: TestApp, url: string): Promise<LightMyRequestResponse> {
  const u = new URL(url);
  assert.equal(u.origin, 'http://localhost:8080');
  return t.app.inject({ method: 'GET', url: u.pathname + u.search });
}

export function verify(t: TestApp, indicium: unknown, apiKey?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: '/v1/stamps/verify', headers: { 'x-api-key': apiKey ?? t.apiKey }, payload: { indicium } });
}

/** The text of every DataMatrix in an image. */
export async function dataMatrices(png: Buffer): Promise<string[]> {
  return (await scan(png, { formats: ['DataMatrix'] })).map((s) => s.text);
}

export async function decodePdf(pdf: Buffer, dpi = 300): Promise<string[]> {
  return dataMatrices(await rasterizePdf(pdf, dpi));
}

let zpl: Promise<{ zplToBase64Async(zpl: string, widthMm?: number, heightMm?: number, dpmm?: number): Promise<string> }> | undefined;

/** Prints the ZPL with an independent renderer (a 3 x 2 in label at 8 dots/mm) and scans the result. */
export async function decodeZpl(text: string): Promise<string[]> {
  zpl ??= import('zpl-renderer-js').then((m) => m.ready).then((r) => r.api);
  const png = Buffer.from(await (await zpl).zplToBase64Async(text, 76.2, 50.8, 8), 'base64');
  return dataMatrices(png);
}
