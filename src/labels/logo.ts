// An account's logo (§10): a PNG or JPEG of at most 256 KiB, made 1-bit once at upload, at 203 dpi
// in a box of at most 1 x 1 inch. Labels copy it when they are created, so a label's drawing never
// changes when the logo does.
import sharp from 'sharp';
import { InvalidInput, UnsupportedMediaType } from '../errors.ts';
import type { Logo } from '../render/index.ts';

export const LOGO_MAX_BYTES = 256 * 1024;
export const LOGO_MEDIA_TYPES = ['image/png', 'image/jpeg'] as const;
/** One inch at 203 dpi: the logo's largest side in printer dots. */
const LOGO_MAX_DOTS = 203;
/** Decoding stops past this many pixels: a small file can claim a huge picture. */
const MAX_INPUT_PIXELS = 25_000_000;

/** The 1-bit logo of a PNG or JPEG body; 415 for another declared type, 400 for what does not decode as it. */
export async function logoFromImage(body: Buffer, mediaType: string): Promise<Logo> {
  const declared = mediaType.split(';')[0]!.trim().toLowerCase();
  if (!(LOGO_MEDIA_TYPES as readonly string[]).includes(declared)) {
    throw new UnsupportedMediaType(`a logo is image/png or image/jpeg, not ${declared || 'a body without a type'}`);
  }
  const bad = (why: string) => new InvalidInput(`the body is not a ${declared === 'image/png' ? 'PNG' : 'JPEG'} image: ${why}`, [{ field: 'body', message: why }]);
  if (body.length === 0) throw bad('it is empty');
  let grey: { data: Buffer; info: { width: number; height: number; channels: number } };
  try {
    // The header first (no pixel is decoded), then the picture, within the limit.
    const meta = await sharp(body, { limitInputPixels: false, failOn: 'error' }).metadata();
    const image = sharp(body, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });
    const format = meta.format === 'jpeg' ? 'image/jpeg' : meta.format === 'png' ? 'image/png' : undefined;
    if (format !== declared) throw bad(`it holds ${meta.format ?? 'something else'}`);
    // A real image that is too large is not "not an image": say what is wrong with it.
    if ((meta.width ?? 0) * (meta.height ?? 0) > MAX_INPUT_PIXELS) {
      const why = `it is ${meta.width} x ${meta.height} pixels; a logo has at most ${MAX_INPUT_PIXELS / 1_000_000} million`;
      throw new InvalidInput(`the image is too large: ${why}`, [{ field: 'body', message: why }]);
    }
    grey = await image
      .flatten({ background: '#ffffff' })
      .greyscale()
      .resize({ width: LOGO_MAX_DOTS, height: LOGO_MAX_DOTS, fit: 'inside', withoutEnlargement: true, kernel: 'lanczos3' })
      .threshold(128)
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    if (err instanceof InvalidInput) throw err;
    throw bad((err as Error).message.split('\n')[0]!.slice(0, 200));
  }
  const { width, height, channels } = grey.info;
  const rowBytes = (width + 7) >> 3;
  const bits = Buffer.alloc(rowBytes * height);
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      if (grey.data[(r * width + c) * channels]! < 128) bits[r * rowBytes + (c >> 3)]! |= 0x80 >> (c & 7);
    }
  }
  return { columns: width, rows: height, bits: bits.toString('base64') };
}
