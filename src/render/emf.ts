// EMF backend: an Enhanced Metafile ([MS-EMF]) holding the label's 1-bit raster as one
// EMR_STRETCHDIBITS record, written by hand (no npm package writes EMF). The header describes a
// reference device with the raster's resolution, so a reader sizes the picture to the label.
import type { Bitmap } from './bitmap.ts';

/** Record types of [MS-EMF] §2.1.1. */
export const EMR_HEADER = 1;
export const EMR_EOF = 14;
export const EMR_STRETCHDIBITS = 81;

export const ENHMETA_SIGNATURE = 0x464d4520; // ' EMF'
export const SRCCOPY = 0x00cc0020;

/**
 * The reference device: a printer at the raster's resolution with a 10 × 15 in surface
 * (254 × 381 mm, whole millimetres and whole pixels at 203 and 300 dpi, larger than any label size).
 */
const DEVICE_MM = [254, 381] as const;

/** EMR_HEADER with extensions 1 and 2 (szlMicrometers), followed by the description. */
const HEADER_FIXED = 108;
const STRETCH_FIXED = 80;
const BMI_SIZE = 40 + 2 * 4;
const EOF_SIZE = 20;

/** UTF-16LE description: application name, NUL, picture name, NUL, NUL ([MS-EMF] §2.3.4.2), padded to 4 bytes. */
function description(title: string): { bytes: Buffer; chars: number } {
  const text = `shipping-platform\0${title.replace(/\0/g, '')}\0\0`;
  const bytes = Buffer.alloc((text.length * 2 + 3) & ~3);
  bytes.write(text, 'utf16le');
  return { bytes, chars: text.length };
}

/**
 * An EMF of the bitmap: header (bounds in device pixels, frame in 0.01 mm of the physical size),
 * the raster as a bottom-up 1-bit DIB with a black/white colour table drawn with SRCCOPY, and EOF.
 */
export function encodeEmf(img: Bitmap, title = 'Label'): Buffer {
  const { width, height, rowBytes, bits, dpi } = img;
  const stride = (rowBytes + 3) & ~3;
  const { bytes: desc, chars: descChars } = description(title);
  const headerSize = HEADER_FIXED + desc.length;
  const bitsSize = stride * height;
  const stretchSize = STRETCH_FIXED + BMI_SIZE + bitsSize;
  const total = headerSize + stretchSize + EOF_SIZE;
  const out = Buffer.alloc(total);

  // The frame is the picture's physical size in 0.01 mm, from pixels at `dpi`.
  const frameW = Math.round((width * 2540) / dpi);
  const frameH = Math.round((height * 2540) / dpi);

  // EMR_HEADER
  out.writeUInt32LE(EMR_HEADER, 0);
  out.writeUInt32LE(headerSize, 4);
  out.writeInt32LE(0, 8); // rclBounds, device units, inclusive
  out.writeInt32LE(0, 12);
  out.writeInt32LE(width - 1, 16);
  out.writeInt32LE(height - 1, 20);
  out.writeInt32LE(0, 24); // rclFrame, 0.01 mm
  out.writeInt32LE(0, 28);
  out.writeInt32LE(frameW, 32);
  out.writeInt32LE(frameH, 36);
  out.writeUInt32LE(ENHMETA_SIGNATURE, 40);
  out.writeUInt32LE(0x00010000, 44); // nVersion
  out.writeUInt32LE(total, 48); // nBytes
  out.writeUInt32LE(3, 52); // nRecords
  out.writeUInt16LE(1, 56); // nHandles: index 0 is reserved, no objects are created
  out.writeUInt16LE(0, 58);
  out.writeUInt32LE(descChars, 60); // nDescription, UTF-16 code units
  out.writeUInt32LE(HEADER_FIXED, 64); // offDescription
  out.writeUInt32LE(0, 68); // nPalEntries
  out.writeInt32LE(Math.round((DEVICE_MM[0] * dpi) / 25.4), 72); // szlDevice, pixels
  out.writeInt32LE(Math.round((DEVICE_MM[1] * dpi) / 25.4), 76);
  out.writeInt32LE(DEVICE_MM[0], 80); // szlMillimeters
  out.writeInt32LE(DEVICE_MM[1], 84);
  out.writeUInt32LE(0, 88); // cbPixelFormat
  out.writeUInt32LE(0, 92); // offPixelFormat
  out.writeUInt32LE(0, 96); // bOpenGL
  out.writeUInt32LE(DEVICE_MM[0] * 1000, 100); // szlMicrometers
  out.writeUInt32LE(DEVICE_MM[1] * 1000, 104);
  desc.copy(out, HEADER_FIXED);

  // EMR_STRETCHDIBITS
  const s = headerSize;
  out.writeUInt32LE(EMR_STRETCHDIBITS, s);
  out.writeUInt32LE(stretchSize, s + 4);
  out.writeInt32LE(0, s + 8); // Bounds, device units, inclusive
  out.writeInt32LE(0, s + 12);
  out.writeInt32LE(width - 1, s + 16);
  out.writeInt32LE(height - 1, s + 20);
  out.writeInt32LE(0, s + 24); // xDest
  out.writeInt32LE(0, s + 28); // yDest
  out.writeInt32LE(0, s + 32); // xSrc
  out.writeInt32LE(0, s + 36); // ySrc
  out.writeInt32LE(width, s + 40); // cxSrc
  out.writeInt32LE(height, s + 44); // cySrc
  out.writeUInt32LE(STRETCH_FIXED, s + 48); // offBmiSrc
  out.writeUInt32LE(BMI_SIZE, s + 52); // cbBmiSrc
  out.writeUInt32LE(STRETCH_FIXED + BMI_SIZE, s + 56); // offBitsSrc
  out.writeUInt32LE(bitsSize, s + 60); // cbBitsSrc
  out.writeUInt32LE(0, s + 64); // UsageSrc: DIB_RGB_COLORS
  out.writeUInt32LE(SRCCOPY, s + 68);
  out.writeInt32LE(width, s + 72); // cxDest
  out.writeInt32LE(height, s + 76); // cyDest
  // BITMAPINFOHEADER
  const b = s + STRETCH_FIXED;
  const ppm = Math.round(dpi / 0.0254);
  out.writeUInt32LE(40, b);
  out.writeInt32LE(width, b + 4);
  out.writeInt32LE(height, b + 8); // positive: rows bottom-up
  out.writeUInt16LE(1, b + 12); // planes
  out.writeUInt16LE(1, b + 14); // bits per pixel
  out.writeUInt32LE(0, b + 16); // BI_RGB
  out.writeUInt32LE(bitsSize, b + 20);
  out.writeInt32LE(ppm, b + 24);
  out.writeInt32LE(ppm, b + 28);
  out.writeUInt32LE(2, b + 32); // colours used
  out.writeUInt32LE(2, b + 36); // colours important
  out.writeUInt32LE(0x00000000, b + 40); // index 0: black
  out.writeUInt32LE(0x00ffffff, b + 44); // index 1: white (the bitmap's 1 bits)
  const px = b + BMI_SIZE;
  for (let y = 0; y < height; y++) bits.copy(out, px + (height - 1 - y) * stride, y * rowBytes, (y + 1) * rowBytes);

  // EMR_EOF
  const e = s + stretchSize;
  out.writeUInt32LE(EMR_EOF, e);
  out.writeUInt32LE(EOF_SIZE, e + 4);
  out.writeUInt32LE(0, e + 8); // nPalEntries
  out.writeUInt32LE(16, e + 12); // offPalEntries
  out.writeUInt32LE(EOF_SIZE, e + 16); // SizeLast
  return out;
}
