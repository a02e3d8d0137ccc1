// The encoders written by hand (BMP, PCX, GIF, EMF) checked byte by byte against their file-format
// specifications — BITMAPFILEHEADER/BITMAPINFOHEADER (Microsoft's DIB documentation), the ZSoft PCX
// Technical Reference, GIF89a, [MS-EMF] — and by property: random bitmaps decoded by readers
// written here from those specifications (and by libvips for GIF) come back pixel for pixel.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import sharp from 'sharp';
import type { Bitmap } from '../../src/render/bitmap.ts';
import { isInk } from '../../src/render/bitmap.ts';
import { encodeBmp } from '../../src/render/bmp.ts';
import { EMR_EOF, EMR_HEADER, EMR_STRETCHDIBITS, encodeEmf } from '../../src/render/emf.ts';
import { encodeGif } from '../../src/render/gif.ts';
import { encodePcx, pcxRle } from '../../src/render/pcx.ts';
import { layoutLabel, renderLabel } from '../../src/render/index.ts';
import type { LabelSize } from '../../src/render/index.ts';
import { rasterize } from '../../src/render/raster.ts';
import { UPS_LABEL } from './fixtures.ts';

// ---------------------------------------------------------------------------------------------
// Bitmaps

/** Random 1-bit bitmaps: long white and black runs (as on a label) mixed with noise; padding bits white. */
const bitmaps = (maxWidth = 90, maxHeight = 24): fc.Arbitrary<Bitmap> =>
  fc
    .record({ width: fc.integer({ min: 1, max: maxWidth }), height: fc.integer({ min: 1, max: maxHeight }), dpi: fc.constantFrom(203, 300) })
    .chain(({ width, height, dpi }) => {
      const rowBytes = (width + 7) >> 3;
      const byte = fc.oneof({ weight: 3, arbitrary: fc.constant(0xff) }, { weight: 2, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 255 }) });
      return fc.array(byte, { minLength: rowBytes * height, maxLength: rowBytes * height }).map((bytes) => {
        const bits = Buffer.from(bytes);
        const pad = (8 - (width & 7)) & 7;
        if (pad) for (let y = 0; y < height; y++) bits[y * rowBytes + rowBytes - 1]! |= (1 << pad) - 1;
        return { width, height, rowBytes, bits, dpi };
      });
    });

function randomBitmap(width: number, height: number, seed: number): Bitmap {
  const rowBytes = (width + 7) >> 3;
  const bits = Buffer.alloc(rowBytes * height);
  let s = seed >>> 0;
  for (let i = 0; i < bits.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    bits[i] = s >>> 24;
  }
  return { width, height, rowBytes, bits, dpi: 203 };
}

/** Whether two bitmaps show the same pixels (padding bits aside). */
function assertSamePixels(actual: (x: number, y: number) => boolean, img: Bitmap, what: string): void {
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      if (actual(x, y) !== isInk(img, x, y)) assert.fail(`${what}: pixel (${x}, ${y}) differs in a ${img.width} × ${img.height} bitmap`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Readers written from the specifications

/** A BMP with BITMAPINFOHEADER, 1 bit per pixel, bottom-up: ink where the palette colour is black. */
function readBmp(b: Buffer): { width: number; height: number; ink: (x: number, y: number) => boolean } {
  const width = b.readInt32LE(18);
  const height = b.readInt32LE(22);
  const stride = Math.ceil((width * b.readUInt16LE(28)) / 32) * 4;
  const offBits = b.readUInt32LE(10);
  const black = (i: number) => b.readUInt32LE(54 + 4 * i) === 0;
  return {
    width,
    height,
    ink: (x, y) => black((b[offBits + (height - 1 - y) * stride + (x >> 3)]! >> (7 - (x & 7))) & 1),
  };
}

/** A 1-plane 1-bit PCX: RLE decoded line by line (a run never crosses a scan line, ZSoft says). */
function readPcx(b: Buffer): { width: number; height: number; bpl: number; runs: number[]; ink: (x: number, y: number) => boolean } {
  const width = b.readUInt16LE(8) - b.readUInt16LE(4) + 1;
  const height = b.readUInt16LE(10) - b.readUInt16LE(6) + 1;
  const bpl = b.readUInt16LE(66);
  const raw = Buffer.alloc(bpl * height);
  const runs: number[] = [];
  let i = 128;
  for (let y = 0; y < height; y++) {
    let o = y * bpl;
    const end = o + bpl;
    while (o < end) {
      assert.ok(i < b.length, 'PCX data ends early');
      const v = b[i++]!;
      if ((v & 0xc0) === 0xc0) {
        const n = v & 0x3f;
        runs.push(n);
        assert.ok(o + n <= end, `a run crosses the end of scan line ${y}`);
        raw.fill(b[i++]!, o, o + n);
        o += n;
      } else raw[o++] = v;
    }
  }
  assert.equal(i, b.length, 'no bytes after the last scan line');
  // Palette entry of bit value v (header palette at 16, three bytes per entry).
  const black = (v: number) => b[16 + 3 * v] === 0 && b[17 + 3 * v] === 0 && b[18 + 3 * v] === 0;
  return { width, height, bpl, runs, ink: (x, y) => black((raw[y * bpl + (x >> 3)]! >> (7 - (x & 7))) & 1) };
}

/** GIF89a with a global colour table, one image, LZW decoded as the specification describes. */
function readGif(b: Buffer): { width: number; height: number; colours: number[][]; clears: number; blocks: number[]; ink: (x: number, y: number) => boolean } {
  assert.equal(b.toString('latin1', 0, 6), 'GIF89a');
  const width = b.readUInt16LE(6);
  const height = b.readUInt16LE(8);
  const packed = b[10]!;
  assert.ok(packed & 0x80, 'global colour table');
  const entries = 2 << (packed & 7);
  const colours: number[][] = [];
  for (let i = 0; i < entries; i++) colours.push([b[13 + 3 * i]!, b[14 + 3 * i]!, b[15 + 3 * i]!]);
  let p = 13 + 3 * entries;
  assert.equal(b[p], 0x2c, 'image descriptor');
  assert.deepEqual([b.readUInt16LE(p + 1), b.readUInt16LE(p + 3), b.readUInt16LE(p + 5), b.readUInt16LE(p + 7), b[p + 9]], [0, 0, width, height, 0]);
  p += 10;
  const minSize = b[p++]!;
  const blocks: number[] = [];
  const parts: Buffer[] = [];
  while (b[p] !== 0) {
    const n = b[p]!;
    blocks.push(n);
    parts.push(b.subarray(p + 1, p + 1 + n));
    p += 1 + n;
  }
  assert.equal(b[p + 1], 0x3b, 'trailer after the block terminator');
  assert.equal(p + 2, b.length);
  const data = Buffer.concat(parts);
  const clear = 1 << minSize;
  const end = clear + 1;
  const prefix = new Int32Array(4096);
  const suffix = new Uint8Array(4096);
  const first = new Uint8Array(4096);
  for (let i = 0; i < clear; i++) {
    prefix[i] = -1;
    suffix[i] = i;
    first[i] = i;
  }
  const pixels: number[] = [];
  const output = (code: number) => {
    const s: number[] = [];
    for (let c = code; c !== -1; c = prefix[c]!) s.push(suffix[c]!);
    for (let k = s.length - 1; k >= 0; k--) pixels.push(s[k]!);
  };
  let size = minSize + 1;
  let next = clear + 2;
  let prev = -1;
  let clears = 0;
  let bit = 0;
  for (;;) {
    assert.ok(bit + size <= data.length * 8, 'LZW data ends before the end code');
    let code = 0;
    for (let k = 0; k < size; k++, bit++) code |= ((data[bit >> 3]! >> (bit & 7)) & 1) << k;
    if (code === clear) {
      clears++;
      size = minSize + 1;
      next = clear + 2;
      prev = -1;
      continue;
    }
    if (code === end) break;
    if (prev === -1) {
      assert.ok(code < clear, 'first code after a clear is a pixel');
      output(code);
      prev = code;
      continue;
    }
    let head: number;
    if (code < next) {
      output(code);
      head = first[code]!;
    } else {
      assert.equal(code, next, 'a code at most one past the table');
      head = first[prev]!;
      output(prev);
      pixels.push(head);
    }
    if (next < 4096) {
      prefix[next] = prev;
      suffix[next] = head;
      first[next] = first[prev]!;
      next++;
      if (next === 1 << size && size < 12) size++;
    }
    prev = code;
  }
  assert.equal(pixels.length, width * height, 'one index per pixel');
  const black = (i: number) => colours[i]!.every((c) => c === 0);
  return { width, height, colours, clears, blocks, ink: (x, y) => black(pixels[y * width + x]!) };
}

interface EmfRecord {
  type: number;
  size: number;
  offset: number;
}

/** The records of an EMF, checking the framing every record shares ([MS-EMF] 2.3: Type, Size, multiple of 4). */
function emfRecords(b: Buffer): EmfRecord[] {
  const records: EmfRecord[] = [];
  for (let offset = 0; offset < b.length; ) {
    const type = b.readUInt32LE(offset);
    const size = b.readUInt32LE(offset + 4);
    assert.ok(size >= 8 && size % 4 === 0 && offset + size <= b.length, `record ${records.length} (type ${type}) size ${size}`);
    records.push({ type, size, offset });
    offset += size;
  }
  return records;
}

/** The picture of an EMF holding one EMR_STRETCHDIBITS of a 1-bit bottom-up DIB. */
function readEmfRaster(b: Buffer): { width: number; height: number; ink: (x: number, y: number) => boolean } {
  const r = emfRecords(b).find((x) => x.type === EMR_STRETCHDIBITS)!;
  const bmi = r.offset + b.readUInt32LE(r.offset + 48);
  const bitsAt = r.offset + b.readUInt32LE(r.offset + 56);
  const width = b.readInt32LE(bmi + 4);
  const height = b.readInt32LE(bmi + 8);
  const stride = Math.ceil((width * b.readUInt16LE(bmi + 14)) / 32) * 4;
  const colourTable = bmi + b.readUInt32LE(bmi);
  const black = (i: number) => (b.readUInt32LE(colourTable + 4 * i) & 0xffffff) === 0;
  return { width, height, ink: (x, y) => black((b[bitsAt + (height - 1 - y) * stride + (x >> 3)]! >> (7 - (x & 7))) & 1) };
}

const label203 = rasterize(layoutLabel(UPS_LABEL), 203);
const label300 = rasterize(layoutLabel(UPS_LABEL), 300);

// ---------------------------------------------------------------------------------------------

describe('BMP (BITMAPFILEHEADER + BITMAPINFOHEADER, 1 bit per pixel)', () => {
  it('has the file header: "BM", the file size, reserved zeros, the offset of the pixels', () => {
    const b = encodeBmp(label203);
    assert.equal(b.toString('latin1', 0, 2), 'BM');
    assert.equal(b.readUInt32LE(2), b.length, 'bfSize is the file length');
    assert.equal(b.readUInt16LE(6), 0);
    assert.equal(b.readUInt16LE(8), 0);
    assert.equal(b.readUInt32LE(10), 14 + 40 + 2 * 4, 'bfOffBits: after both headers and two palette entries');
  });

  it('has the info header: size 40, width, positive height (bottom-up), 1 plane, 1 bit, BI_RGB, image size, 7992 px/m at 203 dpi, two colours', () => {
    const b = encodeBmp(label203);
    const stride = Math.ceil(812 / 32) * 4;
    assert.deepEqual(
      [b.readUInt32LE(14), b.readInt32LE(18), b.readInt32LE(22), b.readUInt16LE(26), b.readUInt16LE(28), b.readUInt32LE(30), b.readUInt32LE(34), b.readInt32LE(38), b.readInt32LE(42), b.readUInt32LE(46), b.readUInt32LE(50)],
      [40, 812, 1218, 1, 1, 0, stride * 1218, 7992, 7992, 2, 2],
    );
    assert.equal(b.length, 62 + stride * 1218);
    assert.deepEqual([...b.subarray(54, 62)], [0, 0, 0, 0, 0xff, 0xff, 0xff, 0], 'palette: 0 black, 1 white (RGBQUAD)');
  });

  it('records 11811 px/m at 300 dpi, and rows padded to 4 bytes', () => {
    const b = encodeBmp(label300);
    assert.equal(b.readInt32LE(38), 11811);
    assert.equal(b.readInt32LE(42), 11811);
    assert.equal(b.readInt32LE(18), 1200);
    assert.equal(b.readUInt32LE(34) % 4, 0);
    assert.equal(b.readUInt32LE(34), 152 * 1800);
  });

  it('the label reads back pixel for pixel (bottom row first in the file)', () => {
    const r = readBmp(encodeBmp(label203));
    assertSamePixels(r.ink, label203, 'BMP');
  });

  it('any bitmap reads back pixel for pixel (property)', () => {
    fc.assert(
      fc.property(bitmaps(), (img) => {
        const b = encodeBmp(img);
        assert.equal(b.readUInt32LE(2), b.length);
        assert.equal(b.readUInt32LE(34), Math.ceil(img.width / 32) * 4 * img.height);
        const r = readBmp(b);
        assert.deepEqual([r.width, r.height], [img.width, img.height]);
        assertSamePixels(r.ink, img, 'BMP');
      }),
      { numRuns: 300 },
    );
  });
});

describe('PCX (ZSoft, version 5, RLE, 1 plane of 1 bit per pixel)', () => {
  it('has the 128-byte header: manufacturer 10, version 5, encoding 1, 1 bpp, window, HDpi/VDpi, palette, 1 plane, even bytes per line, palette info 1, zero filler', () => {
    const b = encodePcx(label203);
    assert.deepEqual([b[0], b[1], b[2], b[3]], [10, 5, 1, 1]);
    assert.deepEqual([b.readUInt16LE(4), b.readUInt16LE(6), b.readUInt16LE(8), b.readUInt16LE(10)], [0, 0, 811, 1217], 'window Xmin, Ymin, Xmax, Ymax');
    assert.deepEqual([b.readUInt16LE(12), b.readUInt16LE(14)], [203, 203], 'HDpi, VDpi');
    assert.deepEqual([...b.subarray(16, 22)], [0, 0, 0, 0xff, 0xff, 0xff], 'EGA palette: 0 black, 1 white');
    assert.equal(b[64], 0, 'reserved');
    assert.equal(b[65], 1, 'planes');
    const bpl = b.readUInt16LE(66);
    assert.equal(bpl % 2, 0, 'bytes per line is even');
    assert.equal(bpl, 102, 'ceil(812 / 8) rounded up to even');
    assert.equal(b.readUInt16LE(68), 1, 'palette info: colour/BW');
    assert.ok(b.subarray(74, 128).every((x) => x === 0), 'filler');
  });

  it('pads odd scan lines to an even byte count, and records 300 dpi', () => {
    const b = encodePcx(label300); // 1200 px = 150 bytes
    assert.equal(b.readUInt16LE(66), 150);
    assert.deepEqual([b.readUInt16LE(12), b.readUInt16LE(14)], [300, 300]);
    const odd = encodePcx(randomBitmap(20, 3, 1)); // 3 bytes of pixels
    assert.equal(odd.readUInt16LE(66), 4);
    assert.equal(odd.readUInt16LE(8), 19);
  });

  it('every run is 1..63 bytes behind a 0xC0 flag, never crosses a scan line, and literal bytes are below 0xC0', () => {
    const r = readPcx(encodePcx(label203));
    assert.ok(r.runs.length > 100);
    assert.ok(r.runs.every((n) => n >= 1 && n <= 63), 'run lengths');
    // Literal bytes below 0xC0 are checked by the decoder: a byte at or above 0xC0 is always a count.
    assertSamePixels(r.ink, label203, 'PCX');
  });

  it('the run-length coding of any bytes decodes to those bytes, line by line (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }).chain((bpl) => fc.tuple(fc.constant(bpl), fc.array(fc.oneof(fc.constant(0xff), fc.constant(0xc0), fc.constant(0), fc.integer({ min: 0, max: 255 })), { minLength: bpl, maxLength: bpl * 200 }))), ([bpl, bytes]) => {
        const rows = Math.floor(bytes.length / bpl);
        const data = Uint8Array.from(bytes.slice(0, rows * bpl));
        const rle = pcxRle(data, bpl, rows);
        const out: number[] = [];
        for (let i = 0; i < rle.length; ) {
          const v = rle[i++]!;
          if ((v & 0xc0) === 0xc0) {
            const n = v & 0x3f;
            assert.ok(n >= 1 && n <= 63);
            const row = Math.floor(out.length / bpl);
            assert.equal(Math.floor((out.length + n - 1) / bpl), row, 'run within one scan line');
            for (let k = 0; k < n; k++) out.push(rle[i]!);
            i++;
          } else out.push(v);
        }
        assert.deepEqual(out, [...data]);
      }),
      { numRuns: 300 },
    );
  });

  it('any bitmap reads back pixel for pixel (property)', () => {
    fc.assert(
      fc.property(bitmaps(), (img) => {
        const r = readPcx(encodePcx(img));
        assert.deepEqual([r.width, r.height], [img.width, img.height]);
        assert.equal(r.bpl % 2, 0);
        assertSamePixels(r.ink, img, 'PCX');
      }),
      { numRuns: 300 },
    );
  });
});

describe('GIF (GIF89a, two-colour global table, LZW)', () => {
  it('has the signature, screen descriptor, a 2-entry colour table, an image descriptor, LZW code size 2, sub-blocks of at most 255 bytes and the trailer', () => {
    const b = encodeGif(label203);
    assert.equal(b.toString('latin1', 0, 6), 'GIF89a');
    assert.deepEqual([b.readUInt16LE(6), b.readUInt16LE(8)], [812, 1218]);
    assert.equal(b[10], 0x80, 'global colour table of 2 entries');
    const g = readGif(b);
    assert.deepEqual(g.colours, [[0, 0, 0], [255, 255, 255]]);
    assert.equal(b[13 + 6 + 10], 2, 'minimum code size');
    assert.ok(g.blocks.every((n) => n >= 1 && n <= 255));
    assert.ok(g.blocks.slice(0, -1).every((n) => n === 255), 'full sub-blocks but the last');
    assert.ok(g.clears > 1, 'the table filled and was cleared');
    assertSamePixels(g.ink, label203, 'GIF');
  });

  it('clears the table when it reaches 4096 codes (random noise)', () => {
    const img = randomBitmap(640, 480, 7);
    const g = readGif(encodeGif(img));
    assert.ok(g.clears > 5, `${g.clears} clear codes`);
    assertSamePixels(g.ink, img, 'GIF');
  });

  it('any bitmap decodes back pixel for pixel with the specification decoder (property)', () => {
    fc.assert(
      fc.property(bitmaps(200, 60), (img) => {
        const g = readGif(encodeGif(img));
        assert.deepEqual([g.width, g.height], [img.width, img.height]);
        assertSamePixels(g.ink, img, 'GIF');
      }),
      { numRuns: 200 },
    );
  });

  it('libvips (sharp) decodes any bitmap back pixel for pixel (property)', async () => {
    await fc.assert(
      fc.asyncProperty(bitmaps(300, 80), async (img) => {
        const { data, info } = await sharp(encodeGif(img)).greyscale().raw().toBuffer({ resolveWithObject: true });
        assert.deepEqual([info.width, info.height], [img.width, img.height]);
        assertSamePixels((x, y) => data[(y * info.width + x) * info.channels]! < 128, img, 'GIF via libvips');
      }),
      { numRuns: 40 },
    );
  });
});

describe('EMF ([MS-EMF]: EMR_HEADER, EMR_STRETCHDIBITS, EMR_EOF)', () => {
  it('is three records, header first and EOF last, with nBytes the file length and nRecords their count', () => {
    const b = encodeEmf(label203, 'UPS label 1Z5R89390357567127');
    const records = emfRecords(b);
    assert.deepEqual(records.map((r) => r.type), [EMR_HEADER, EMR_STRETCHDIBITS, EMR_EOF]);
    assert.deepEqual([EMR_HEADER, EMR_STRETCHDIBITS, EMR_EOF], [1, 81, 14]);
    assert.equal(b.readUInt32LE(48), b.length, 'nBytes');
    assert.equal(b.readUInt32LE(52), 3, 'nRecords');
  });

  it('has the header: bounds in device pixels, frame in 0.01 mm of the 4 × 6 in label, signature, version, handles, device of 203 dpi', () => {
    const b = encodeEmf(label203, 'UPS label 1Z5R89390357567127');
    assert.deepEqual([8, 12, 16, 20].map((o) => b.readInt32LE(o)), [0, 0, 811, 1217], 'rclBounds, inclusive');
    assert.deepEqual([24, 28, 32, 36].map((o) => b.readInt32LE(o)), [0, 0, 10160, 15240], 'rclFrame: 101.6 × 152.4 mm');
    assert.equal(b.readUInt32LE(40), 0x464d4520, "dSignature ' EMF'");
    assert.equal(b.readUInt32LE(44), 0x10000, 'nVersion');
    assert.ok(b.readUInt16LE(56) >= 1, 'nHandles (index 0 reserved)');
    assert.equal(b.readUInt16LE(58), 0, 'sReserved');
    assert.equal(b.readUInt32LE(68), 0, 'nPalEntries');
    const [devW, devH, mmW, mmH] = [72, 76, 80, 84].map((o) => b.readInt32LE(o)) as [number, number, number, number];
    assert.ok(Math.abs((devW / mmW) * 25.4 - 203) < 0.5 && Math.abs((devH / mmH) * 25.4 - 203) < 0.5, `szlDevice ${devW}×${devH} px on szlMillimeters ${mmW}×${mmH}: 203 dpi`);
    assert.ok(devW >= 812 && devH >= 1218, 'the picture fits the reference device');
    const headerSize = b.readUInt32LE(4);
    assert.ok(headerSize >= 108, 'header with extensions 1 and 2');
    assert.deepEqual([b.readUInt32LE(88), b.readUInt32LE(92), b.readUInt32LE(96)], [0, 0, 0], 'no pixel format, no OpenGL');
    assert.deepEqual([b.readUInt32LE(100), b.readUInt32LE(104)], [mmW * 1000, mmH * 1000], 'szlMicrometers');
    const n = b.readUInt32LE(60);
    const off = b.readUInt32LE(64);
    assert.ok(off >= 108 && off + 2 * n <= headerSize, 'the description lies inside the header record');
    assert.equal(b.toString('utf16le', off, off + 2 * n), 'shipping-platform\0UPS label 1Z5R89390357567127\0\0');
  });

  it('frames every label size at its physical size, and keeps it at 300 dpi', async () => {
    const frames: Record<LabelSize, [number, number]> = { '4x6': [10160, 15240], '4x8': [10160, 20320], '6x4': [15240, 10160], '8.5x11': [21590, 27940] };
    for (const [size, [w, h]] of Object.entries(frames)) {
      for (const dpi of [203, 300] as const) {
        const b = (await renderLabel({ ...UPS_LABEL, size: size as LabelSize }, 'EMF', { dpi })).body;
        const frame = [32, 36].map((o) => b.readInt32LE(o)) as [number, number];
        // Pixels are whole, so 8.5 in at 203 dpi is 1726 px (8.502 in): within half a pixel of the size.
        assert.ok(Math.abs(frame[0] - w) <= 1270 / dpi && Math.abs(frame[1] - h) <= 1270 / dpi, `${size} ${dpi} dpi: frame ${frame}`);
        const [devW, mmW] = [b.readInt32LE(72), b.readInt32LE(80)];
        assert.ok(Math.abs((devW / mmW) * 25.4 - dpi) < 0.5, `${size}: device at ${dpi} dpi`);
      }
    }
  });

  it('draws the raster with EMR_STRETCHDIBITS: SRCCOPY, DIB_RGB_COLORS, 1:1 onto the bounds, a BITMAPINFOHEADER with a black/white colour table, rows bottom-up', () => {
    const b = encodeEmf(label203);
    const r = emfRecords(b)[1]!;
    const at = (k: number) => b.readInt32LE(r.offset + k);
    const u = (k: number) => b.readUInt32LE(r.offset + k);
    assert.deepEqual([at(8), at(12), at(16), at(20)], [0, 0, 811, 1217], 'Bounds');
    assert.deepEqual([at(24), at(28), at(32), at(36), at(40), at(44)], [0, 0, 0, 0, 812, 1218], 'xDest, yDest, xSrc, ySrc, cxSrc, cySrc');
    assert.deepEqual([at(72), at(76)], [812, 1218], 'cxDest, cyDest');
    const stride = Math.ceil(812 / 32) * 4;
    assert.deepEqual([u(48), u(52), u(56), u(60)], [80, 48, 128, stride * 1218], 'offBmiSrc, cbBmiSrc, offBitsSrc, cbBitsSrc');
    assert.equal(u(64), 0, 'UsageSrc: DIB_RGB_COLORS');
    assert.equal(u(68), 0x00cc0020, 'BitBltRasterOperation: SRCCOPY');
    assert.equal(r.size, 128 + stride * 1218);
    const bmi = r.offset + 80;
    assert.deepEqual(
      [b.readUInt32LE(bmi), b.readInt32LE(bmi + 4), b.readInt32LE(bmi + 8), b.readUInt16LE(bmi + 12), b.readUInt16LE(bmi + 14), b.readUInt32LE(bmi + 16), b.readUInt32LE(bmi + 20), b.readInt32LE(bmi + 24), b.readUInt32LE(bmi + 32)],
      [40, 812, 1218, 1, 1, 0, stride * 1218, 7992, 2],
    );
    assert.deepEqual([...b.subarray(bmi + 40, bmi + 48)], [0, 0, 0, 0, 0xff, 0xff, 0xff, 0]);
    assertSamePixels(readEmfRaster(b).ink, label203, 'EMF');
  });

  it('ends with EMR_EOF: size 20, no palette, offPalEntries 16, nSizeLast 20', () => {
    const b = encodeEmf(label300);
    const r = emfRecords(b).at(-1)!;
    assert.equal(r.type, EMR_EOF);
    assert.equal(r.offset + r.size, b.length);
    assert.deepEqual([r.size, b.readUInt32LE(r.offset + 8), b.readUInt32LE(r.offset + 12), b.readUInt32LE(r.offset + 16)], [20, 0, 16, 20]);
  });

  it('any bitmap reads back pixel for pixel, with nBytes, nRecords and bounds right (property)', () => {
    fc.assert(
      fc.property(bitmaps(), fc.string({ maxLength: 40 }), (img, title) => {
        const b = encodeEmf(img, title);
        assert.equal(b.readUInt32LE(48), b.length);
        assert.deepEqual(emfRecords(b).map((r) => r.type), [1, 81, 14]);
        assert.deepEqual([16, 20].map((o) => b.readInt32LE(o)), [img.width - 1, img.height - 1]);
        const r = readEmfRaster(b);
        assert.deepEqual([r.width, r.height], [img.width, img.height]);
        assertSamePixels(r.ink, img, 'EMF');
      }),
      { numRuns: 300 },
    );
  });
});
