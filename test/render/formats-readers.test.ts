// Every format the spec names beyond PDF, PNG, ZPL and SVG is downloaded the way a
// printer fetches it (a shipment and a label made through the API, the signed `url` of
// `GET /v1/labels/{id}?format=X`), checked for its media type and file name, then opened by a
// reader that is not ours, from Debian's packages (installed by .ci/run): ImageMagick for JPEG,
// TIFF, GIF, WEBP and BMP, netpbm for PCX, Ghostscript for PS and EPS, emf2svg (then ImageMagick)
// for EMF. The reader's picture is scanned by zxing, and the tracking barcode must be the label's
// tracking number. A missing reader fails the test with what to install; nothing is skipped.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createShipment, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { scan } from './scan.ts';

const run = promisify(execFile);

/** Each reader: the command the test runs and the Debian package that provides it. */
const READERS = {
  identify: 'imagemagick',
  convert: 'imagemagick',
  gs: 'ghostscript',
  pcxtoppm: 'netpbm',
  pnmtopng: 'netpbm',
  'emf2svg-conv': 'emf2svg',
} as const;
type Reader = keyof typeof READERS;

const checked = new Map<Reader, Promise<void>>();

/** Fails (never skips) when a reader is not installed, saying which package to install. */
function requireReader(cmd: Reader): Promise<void> {
  let p = checked.get(cmd);
  if (!p) {
    p = (async () => {
      const how = `install the Debian package ${READERS[cmd]} (apt-get install ${READERS[cmd]}, or run .ci/run)`;
      try {
        await run('which', [cmd]);
      } catch {
        assert.fail(`the reader \`${cmd}\` is not installed: ${how}`);
      }
      if (cmd === 'convert' || cmd === 'identify') {
        // Only ImageMagick itself counts (some images put a stand-in `convert` on the PATH).
        const version = await run(cmd, ['-version']).then((r) => r.stdout, () => '');
        assert.match(version, /ImageMagick/, `\`${cmd}\` is not ImageMagick: ${how}`);
      }
    })();
    checked.set(cmd, p);
  }
  return p;
}

async function inDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'render-readers-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function identify(file: string, format: string): Promise<string> {
  await requireReader('identify');
  return (await run('identify', ['-format', format, file])).stdout;
}

/** ImageMagick's picture of a file, as PNG. */
async function imageMagickPng(file: string, dir: string): Promise<Buffer> {
  await requireReader('convert');
  const out = join(dir, 'im.png');
  await run('convert', [file, out]);
  return readFile(out);
}

/** netpbm's picture of a PCX (pcxtoppm | pnmtopng). */
async function netpbmPng(file: string): Promise<Buffer> {
  await requireReader('pcxtoppm');
  await requireReader('pnmtopng');
  const ppm = await run('pcxtoppm', [file], { encoding: 'buffer', maxBuffer: 64 << 20 });
  return new Promise<Buffer>((resolve, reject) => {
    const child = execFile('pnmtopng', [], { encoding: 'buffer', maxBuffer: 64 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    child.stdin!.end(ppm.stdout);
  });
}

/** Ghostscript's picture of PS or EPS at `dpi` (EPS cropped to its BoundingBox). */
async function ghostscriptPng(file: string, dir: string, eps: boolean, dpi = 203): Promise<Buffer> {
  await requireReader('gs');
  const out = join(dir, 'gs.png');
  await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', ...(eps ? ['-dEPSCrop'] : []), '-sDEVICE=pnggray', `-r${dpi}`, `-sOutputFile=${out}`, file]);
  return readFile(out);
}

/** emf2svg's SVG of an EMF, with its record log. */
async function emf2svg(file: string, dir: string): Promise<{ svg: string; svgFile: string; log: string }> {
  await requireReader('emf2svg-conv');
  const svgFile = join(dir, 'emf.svg');
  const { stdout } = await run('emf2svg-conv', ['-v', '-i', file, '-o', svgFile], { maxBuffer: 16 << 20 });
  return { svg: await readFile(svgFile, 'utf8'), svgFile, log: stdout.replace(/\x1b\[[0-9;]*m/g, '') };
}

/** Mean grey of a picture through ImageMagick (0 black … 1 white). */
async function meanGrey(png: Buffer, dir: string, name: string): Promise<number> {
  const file = join(dir, name);
  await writeFile(file, png);
  return Number(await identify(file, '%[fx:mean]'));
}

/** The label's tracking number is among the Code 128 symbols zxing reads in the picture. */
async function assertTrackingBarcode(png: Buffer, trackingNumber: string, format: string): Promise<void> {
  const found = await scan(png, { formats: ['Code128'] });
  assert.ok(found.some((b) => b.text === trackingNumber), `${format}: expected ${trackingNumber}, read ${JSON.stringify(found)}`);
}

const EXPECTED = {
  JPEG: { mediaType: 'image/jpeg', ext: 'jpg' },
  TIFF: { mediaType: 'image/tiff', ext: 'tiff' },
  GIF: { mediaType: 'image/gif', ext: 'gif' },
  WEBP: { mediaType: 'image/webp', ext: 'webp' },
  BMP: { mediaType: 'image/bmp', ext: 'bmp' },
  PCX: { mediaType: 'image/vnd.zbrush.pcx', ext: 'pcx' },
  PS: { mediaType: 'application/postscript', ext: 'ps' },
  EPS: { mediaType: 'application/postscript', ext: 'eps' },
  EMF: { mediaType: 'image/emf', ext: 'emf' },
} as const;
type Format = keyof typeof EXPECTED;

/** Operators an EPS file must not use (EPSF 3.0 specification, section "Prohibited operators"). */
const EPS_PROHIBITED = [
  'banddevice', 'clear', 'cleardictstack', 'copypage', 'erasepage', 'exitserver', 'framedevice', 'grestoreall', 'initclip',
  'initgraphics', 'initmatrix', 'quit', 'renderbands', 'setglobal', 'setpagedevice', 'setpageparams', 'setshared', 'startjob',
];

/** PostScript tokens outside comments and strings (the files hold no strings but the DSC ones). */
function psTokens(ps: string): Set<string> {
  const code = ps.split('\n').filter((l) => !l.startsWith('%')).join('\n').replace(/%[^\n]*/g, '');
  return new Set(code.split(/[\s{}[\]<>()/]+/).filter(Boolean));
}

forEachDatabase((database) => {
  let t: TestApp;
  let label: Record<string, any>;
  before(async () => {
    t = await startTestApp(database);
    const s = await createShipment(t);
    const res = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.id, size: '4x6' } });
    assert.equal(res.statusCode, 201, res.body);
    label = res.json();
  });
  after(async () => t.close());

  /** Downloads the label as `format` through its signed url, checking status, media type and file name. */
  async function download(format: Format, dpi?: 300): Promise<Buffer> {
    const got = await t.request({ method: 'GET', url: `/v1/labels/${label.id}?format=${format}` });
    assert.equal(got.statusCode, 200, got.body);
    assert.equal(got.json().format, format);
    const u = new URL(got.json().url);
    const res = await t.app.inject({ method: 'GET', url: u.pathname + u.search + (dpi ? `&dpi=${dpi}` : '') });
    assert.equal(res.statusCode, 200, `${format}: ${res.body.slice(0, 200)}`);
    assert.equal(res.headers['content-type'], EXPECTED[format].mediaType);
    assert.equal(res.headers['content-disposition'], `inline; filename="label-${label.trackingNumber}.${EXPECTED[format].ext}"`);
    return res.rawPayload;
  }

  /** Downloads into a file named as the Content-Disposition says, and runs `fn` on it. */
  function downloaded<T>(format: Format, fn: (file: string, dir: string, body: Buffer) => Promise<T>, dpi?: 300): Promise<T> {
    return inDir(async (dir) => {
      const body = await download(format, dpi);
      const file = join(dir, `label.${EXPECTED[format].ext}`);
      await writeFile(file, body);
      return fn(file, dir, body);
    });
  }

  describe('every format downloaded from the signed url and opened by an independent reader', () => {
    it('JPEG: ImageMagick reads a 203 dpi greyscale JPEG, and the tracking barcode decodes', async () => {
      await downloaded('JPEG', async (file, dir) => {
        assert.equal(await identify(file, '%m %wx%h %x %y %U %[colorspace]'), 'JPEG 812x1218 203 203 PixelsPerInch Gray');
        await assertTrackingBarcode(await imageMagickPng(file, dir), label.trackingNumber, 'JPEG');
      });
    });

    it('TIFF: ImageMagick reads a 1-bit CCITT Group 4 TIFF at 203 × 203 pixels per inch, and the tracking barcode decodes', async () => {
      await downloaded('TIFF', async (file, dir) => {
        assert.equal(await identify(file, '%m %wx%h %z-bit %C'), 'TIFF 812x1218 1-bit Group4');
        const full = (await run('identify', ['-verbose', file])).stdout;
        assert.match(full, /Compression: Group4/);
        assert.match(full, /Resolution: 203x203/);
        assert.match(full, /Units: PixelsPerInch/);
        assert.match(full, /Depth: 1-bit/);
        await assertTrackingBarcode(await imageMagickPng(file, dir), label.trackingNumber, 'TIFF');
      });
    });

    it('GIF: ImageMagick reads a two-colour GIF, and the tracking barcode decodes', async () => {
      await downloaded('GIF', async (file, dir) => {
        assert.equal(await identify(file, '%m %wx%h colours=%k'), 'GIF 812x1218 colours=2');
        const full = (await run('identify', ['-verbose', file])).stdout;
        assert.match(full, /Colors: 2\n/);
        assert.match(full, /Type: Bilevel/);
        await assertTrackingBarcode(await imageMagickPng(file, dir), label.trackingNumber, 'GIF');
      });
    });

    it('WEBP: ImageMagick (libwebp) reads it, and the tracking barcode decodes', async () => {
      await downloaded('WEBP', async (file, dir, body) => {
        assert.equal(body.toString('latin1', 0, 4), 'RIFF');
        assert.equal(body.toString('latin1', 8, 12), 'WEBP');
        const chunks: string[] = [];
        for (let at = 12; at + 8 <= body.length; at += 8 + ((body.readUInt32LE(at + 4) + 1) & ~1)) chunks.push(body.toString('latin1', at, at + 4));
        assert.ok(chunks.includes('VP8L') && !chunks.includes('VP8 '), `lossless (VP8L) image data: ${chunks.join(', ')}`);
        assert.equal(await identify(file, '%m %wx%h colours=%k'), 'WEBP 812x1218 colours=2');
        await assertTrackingBarcode(await imageMagickPng(file, dir), label.trackingNumber, 'WEBP');
      });
    });

    it('BMP: ImageMagick reads a 1-bit BMP with 7992 pixels per metre (203 dpi) in its header, and the tracking barcode decodes', async () => {
      await downloaded('BMP', async (file, dir, body) => {
        assert.equal(await identify(file, '%wx%h %z-bit colours=%k'), '812x1218 1-bit colours=2');
        const full = (await run('identify', ['-verbose', file])).stdout;
        assert.match(full, /Resolution: 79\.92x79\.92\n/);
        assert.match(full, /Units: PixelsPerCentimeter/);
        assert.equal(body.readInt32LE(38), 7992);
        await assertTrackingBarcode(await imageMagickPng(file, dir), label.trackingNumber, 'BMP');
      });
    });

    it('PCX: ImageMagick identifies a 1-bit version 5 PCX at 203 dpi, netpbm reads it, and the tracking barcode decodes', async () => {
      await downloaded('PCX', async (file, _dir, body) => {
        assert.equal(await identify(file, '%m %wx%h %z-bit %x %y %U colours=%k'), 'PCX 812x1218 1-bit 203 203 PixelsPerInch colours=2');
        assert.deepEqual([body[0], body[1], body[2], body[3]], [0x0a, 5, 1, 1], 'ZSoft, version 5, RLE, 1 bit per pixel');
        await assertTrackingBarcode(await netpbmPng(file), label.trackingNumber, 'PCX');
      });
    });

    it('PCX: white paper and black ink as Ghostscript writes a monochrome PCX, under ImageMagick and netpbm alike', async () => {
      // Ghostscript's pcxmono device renders the same label (from our EPS) as a reference PCX. Each
      // reader must see the two files with the same polarity: ImageMagick 6.9 shows 1-bit PCX with
      // bit 1 black (so both look inverted there), netpbm with bit 1 white (both look right).
      await inDir(async (dir) => {
        const ours = join(dir, 'ours.pcx');
        await writeFile(ours, await download('PCX'));
        const eps = join(dir, 'label.eps');
        await writeFile(eps, await download('EPS'));
        await requireReader('gs');
        const reference = join(dir, 'gs.pcx');
        await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dEPSCrop', '-sDEVICE=pcxmono', '-r203', `-sOutputFile=${reference}`, eps]);
        const netpbmOurs = await meanGrey(await netpbmPng(ours), dir, 'n1.png');
        const netpbmRef = await meanGrey(await netpbmPng(reference), dir, 'n2.png');
        assert.ok(netpbmOurs > 0.7 && netpbmRef > 0.7, `netpbm: mostly white paper, ours ${netpbmOurs}, Ghostscript's ${netpbmRef}`);
        const imOurs = Number(await identify(ours, '%[fx:mean]'));
        const imRef = Number(await identify(reference, '%[fx:mean]'));
        assert.ok((imOurs - 0.5) * (imRef - 0.5) > 0, `ImageMagick: the same polarity for both, ours ${imOurs}, Ghostscript's ${imRef}`);
      });
    });

    it('PS: DSC comments, the page size of the label, rendered by Ghostscript, and the tracking barcode decodes', async () => {
      await downloaded('PS', async (file, dir, body) => {
        const ps = body.toString('latin1');
        assert.match(ps, /^%!PS-Adobe-3\.0\n/);
        for (const dsc of ['%%BoundingBox: 0 0 288 432', '%%Pages: 1', '%%EndComments', '%%BeginProlog', '%%EndProlog', '%%Page: 1 1', '%%Trailer', '%%EOF', '%%DocumentMedia: Label 288 432 0 () ()']) {
          assert.ok(ps.split('\n').includes(dsc), `PS has ${dsc}`);
        }
        assert.ok(ps.includes('<< /PageSize [288 432] >> setpagedevice'));
        const png = await ghostscriptPng(file, dir, false);
        assert.equal(await identify(join(dir, 'gs.png'), '%wx%h'), '812x1218', 'a 4 × 6 in page at 203 dpi');
        await assertTrackingBarcode(png, label.trackingNumber, 'PS');
      });
    });

    it('EPS: EPSF-3.0 with the BoundingBox of the label and no prohibited operator, rendered by Ghostscript, and the tracking barcode decodes', async () => {
      await downloaded('EPS', async (file, dir, body) => {
        const eps = body.toString('latin1');
        assert.match(eps, /^%!PS-Adobe-3\.0 EPSF-3\.0\n%%BoundingBox: 0 0 288 432\n/);
        const tokens = psTokens(eps);
        for (const op of EPS_PROHIBITED) assert.ok(!tokens.has(op), `EPS uses ${op}`);
        // Ghostscript's bbox device measures the marks: all inside the declared BoundingBox.
        const bbox = await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=bbox', file]);
        const m = /%%HiResBoundingBox: ([\d.-]+) ([\d.-]+) ([\d.-]+) ([\d.-]+)/.exec(bbox.stdout + bbox.stderr);
        assert.ok(m, bbox.stderr);
        const [x0, y0, x1, y1] = m.slice(1).map(Number) as [number, number, number, number];
        assert.ok(x0 >= -0.5 && y0 >= -0.5 && x1 <= 288.5 && y1 <= 432.5, `marks at ${m.slice(1).join(' ')}`);
        const png = await ghostscriptPng(file, dir, true);
        assert.equal(await identify(join(dir, 'gs.png'), '%wx%h'), '812x1218', 'cropped to the BoundingBox at 203 dpi');
        await assertTrackingBarcode(png, label.trackingNumber, 'EPS');
      });
    });

    it('EMF: emf2svg reads the header, the STRETCHDIBITS raster and EOF; ImageMagick renders its SVG, and the tracking barcode decodes', async () => {
      await downloaded('EMF', async (file, dir) => {
        const { svg, svgFile, log } = await emf2svg(file, dir);
        assert.deepEqual([...log.matchAll(/^(U_EMR_\w+)\s+record:/gm)].map((m) => m[1]), ['U_EMR_HEADER', 'U_EMR_STRETCHDIBITS', 'U_EMR_EOF']);
        assert.match(log, /rclFrame:\s+\{0,0,10160,15240\}/, 'the frame is 4 × 6 in in 0.01 mm');
        assert.match(log, /rclBounds:\s+\{0,0,811,1217\}/);
        assert.match(log, /dSignature:\s+0x464D4520/);
        assert.match(log, /biBitCount:1 /);
        assert.match(svg, /<image width="812\.0000" height="1218\.0000"/);
        await assertTrackingBarcode(await imageMagickPng(svgFile, dir), label.trackingNumber, 'EMF');
      });
    });
  });

  describe('dpi=300 on the download: every raster format has 300-dpi pixel dimensions', () => {
    it('JPEG, TIFF, GIF, WEBP, BMP, PCX are 1200 × 1800 pixels, with 300 dpi where the format records it', async () => {
      // Pixels per inch as ImageMagick reports them; GIF has no resolution field.
      const want: Record<string, number | undefined> = { JPEG: 300, TIFF: 300, GIF: undefined, WEBP: 300, BMP: 300, PCX: 300 };
      for (const [format, dpi] of Object.entries(want)) {
        const got = await downloaded(format as Format, (file) => identify(file, '%w %h %x %U'), 300);
        const [w, h, res, units] = got.split(' ');
        assert.deepEqual([Number(w), Number(h)], [1200, 1800], format);
        if (dpi === undefined) continue;
        // BMP records pixels per metre (11811), which ImageMagick shows per centimetre.
        const perInch = units === 'PixelsPerCentimeter' ? Number(res) * 2.54 : Number(res);
        assert.ok(Math.abs(perInch - dpi) < 0.1, `${format}: ${got}`);
      }
    });

    it('EMF holds a 1200 × 1800 raster for the same 4 × 6 in frame', async () => {
      await downloaded('EMF', async (file, dir) => {
        const { svg, log } = await emf2svg(file, dir);
        assert.match(log, /rclFrame:\s+\{0,0,10160,15240\}/);
        assert.match(log, /rclBounds:\s+\{0,0,1199,1799\}/);
        assert.match(log, /biXPelsPerMeter:11811 /);
        assert.match(svg, /<image width="1200\.0000" height="1800\.0000"/);
      }, 300);
    });

    it('the 300 dpi TIFF and EMF still decode to the tracking number', async () => {
      await downloaded('TIFF', async (file, dir) => assertTrackingBarcode(await imageMagickPng(file, dir), label.trackingNumber, 'TIFF 300 dpi'), 300);
      await downloaded('EMF', async (file, dir) => {
        const { svgFile } = await emf2svg(file, dir);
        await assertTrackingBarcode(await imageMagickPng(svgFile, dir), label.trackingNumber, 'EMF 300 dpi');
      }, 300);
    });
  });
});
