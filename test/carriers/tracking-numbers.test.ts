import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Carrier } from '../../src/carriers/index.ts';
import { dhlCheckDigit } from '../../src/carriers/dhl.ts';
import { fedexCheckDigit } from '../../src/carriers/fedex.ts';
import { upsCheckDigit } from '../../src/carriers/ups.ts';
import { uspsCheckDigit } from '../../src/carriers/usps.ts';
import {
  CARRIERS,
  SERVICES,
  formatTrackingNumber,
  isValidTrackingNumber,
  maxTrackingSerial,
  normalizeTrackingNumber,
  trackingNumberFor,
} from '../../src/carriers/index.ts';

const WORKED_EXAMPLES: Record<Carrier, string> = {
  UPS: '1Z5R89390357567127',
  USPS: '9400111206206406260787',
  FedEx: '986578788855',
  DHL: '3318810025',
};

const serviceCodes = (carrier: Carrier) => SERVICES[carrier].map((s) => s.code);

/** Serials up to the carrier's capacity, with the realistic range below 10^7 drawn half the time. */
const serialFor = (carrier: Carrier) =>
  fc.oneof(fc.bigInt({ min: 1n, max: 9_999_999n }), fc.bigInt({ min: 1n, max: maxTrackingSerial(carrier) }));

const issued = fc.constantFrom(...CARRIERS).chain((carrier) =>
  fc.record({
    carrier: fc.constant(carrier),
    serial: serialFor(carrier),
    service: fc.constantFrom(...serviceCodes(carrier)),
  }),
);

const issuedNumber = issued.map(({ carrier, serial, service }) => ({
  carrier,
  trackingNumber: trackingNumberFor(carrier, serial, service),
}));

const numbered = (carrier: Carrier, payload: RegExp, complete: (payload: string) => string) =>
  fc.stringMatching(payload).map((p) => ({ carrier, trackingNumber: complete(p) }));

/** Any well-formed number (other accounts, services, prefixes), completed with its check digit. */
const anyValidNumber = fc.oneof(
  numbered('UPS', /^[0-9A-Z]{15}$/, (body) => `1Z${body}${upsCheckDigit(body)}`),
  numbered('USPS', /^9[2-5]\d{19}$/, (d) => d + uspsCheckDigit(d)),
  numbered('FedEx', /^\d{11}$/, (d) => d + fedexCheckDigit(d)),
  numbered('DHL', /^\d{9}$/, (d) => d + dhlCheckDigit(d)),
);

const validNumber = fc.oneof(issuedNumber, anyValidNumber);

// Independent statements of where each check digit is blind, taken from the algorithms as the
// contract states them; the tests assert that a change is caught exactly when it is not in one.
const upsValue = (char: string) => (/\d/.test(char) ? Number(char) : (char.charCodeAt(0) - 3) % 10);

function fedexResidue(trackingNumber: string): number {
  const weights = [1, 3, 7];
  let sum = 0;
  [...trackingNumber.slice(0, 11)].reverse().forEach((d, k) => {
    sum += Number(d) * weights[k % 3]!;
  });
  return sum % 11;
}

/** A FedEx change keeps the check digit only when the sum mod 11 moves between 0 and 10. */
const fedexBlind = (before: string, after: string) =>
  new Set([fedexResidue(before), fedexResidue(after)]).size === 2 &&
  [0, 10].includes(fedexResidue(before)) &&
  [0, 10].includes(fedexResidue(after));

function changeIsBlind(carrier: Carrier, before: string, position: number, char: string): boolean {
  const after = before.slice(0, position) + char + before.slice(position + 1);
  switch (carrier) {
    case 'UPS': {
      // The 15 characters after 1Z: each adds its value, doubled on even positions counted from 1.
      if (position < 2 || position > 16 || !/[0-9A-Z]/.test(char)) return false;
      const weight = position % 2 === 0 ? 1 : 2;
      return ((upsValue(char) - upsValue(before[position]!)) * weight) % 10 === 0;
    }
    case 'USPS':
      return false;
    case 'FedEx':
      return position <= 10 && /\d/.test(char) && fedexBlind(before, after);
    case 'DHL':
      return position <= 8 && /\d/.test(char) && Math.abs(Number(char) - Number(before[position])) === 7;
  }
}

/** First and last index i such that swapping characters i and i+1 stays in the checked payload. */
const SWAPPABLE: Record<Carrier, [number, number]> = {
  UPS: [2, 15], // within the 15 characters after 1Z
  USPS: [2, 20], // after the 9x channel, up to and including the check digit
  FedEx: [0, 9], // within the first 11 digits
  DHL: [0, 7], // within the first 9 digits
};

function swapIsBlind(carrier: Carrier, before: string, i: number): boolean {
  const [a, b] = [before[i]!, before[i + 1]!];
  switch (carrier) {
    case 'UPS':
      return upsValue(a) === upsValue(b);
    case 'USPS':
      return Math.abs(Number(a) - Number(b)) === 5;
    case 'FedEx':
      return fedexBlind(before, swap(before, i));
    case 'DHL':
      return Math.abs(Number(a) - Number(b)) === 7;
  }
}

/** The carriers whose shape and check digit the text satisfies: lengths never overlap, so at most one. */
const accepting = (text: string) => CARRIERS.filter((carrier) => isValidTrackingNumber(carrier, text));

const swap = (text: string, i: number) => text.slice(0, i) + text[i + 1] + text[i] + text.slice(i + 2);

const REPLACEMENTS = [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZaz -'];

describe('worked examples (notes/measurements.md)', () => {
  for (const carrier of CARRIERS) {
    const example = WORKED_EXAMPLES[carrier];
    it(`${carrier} ${example} validates for ${carrier} only`, () => {
      assert.deepEqual(accepting(example), [carrier]);
    });

    it(`${carrier} ${example}: every single-character change is caught unless the algorithm is blind to it`, () => {
      for (let position = 0; position < example.length; position++) {
        for (const char of REPLACEMENTS) {
          if (char === example[position]) continue;
          const changed = example.slice(0, position) + char + example.slice(position + 1);
          assert.equal(
            isValidTrackingNumber(carrier, changed),
            changeIsBlind(carrier, example, position, char),
            `${changed} (position ${position} → ${char})`,
          );
        }
      }
    });
  }

  it('are what our own serials produce (account 5R8939, mailer id 112062, prefixes 9 and 3)', () => {
    assert.equal(trackingNumberFor('UPS', 5_756_712n, 'ground'), WORKED_EXAMPLES.UPS);
    assert.equal(trackingNumberFor('USPS', 640_626_078n, 'ground_advantage'), WORKED_EXAMPLES.USPS);
    assert.equal(trackingNumberFor('FedEx', 8_657_878_885n, 'ground'), WORKED_EXAMPLES.FedEx);
    assert.equal(trackingNumberFor('DHL', 31_881_002n, 'express_worldwide'), WORKED_EXAMPLES.DHL);
  });
});

describe('trackingNumberFor', () => {
  it('every number it issues validates for its carrier and no other', () => {
    fc.assert(
      fc.property(issuedNumber, ({ carrier, trackingNumber }) => {
        assert.deepEqual(accepting(trackingNumber), [carrier], trackingNumber);
      }),
      { numRuns: 2000 },
    );
  });

  it('has the carrier shape: UPS 1Z+18, USPS 22 digits, FedEx 12 digits, DHL 10 digits', () => {
    fc.assert(
      fc.property(issued, ({ carrier, serial, service }) => {
        const trackingNumber = trackingNumberFor(carrier, serial, service);
        const code = SERVICES[carrier].find((s) => s.code === service)!.carrierCode;
        const shape: Record<Carrier, RegExp> = {
          UPS: new RegExp(`^1Z5R8939${code}\\d{8}$`),
          USPS: new RegExp(`^94${code}112062\\d{11}$`),
          FedEx: /^9\d{11}$/,
          DHL: /^3\d{9}$/,
        };
        assert.match(trackingNumber, shape[carrier]);
      }),
    );
  });

  it('puts the UPS service code after the account: ground 03, next_day_air 01, 2nd_day_air 02, 3_day_select 12, worldwide_saver 65, worldwide_expedited 08', () => {
    const expected = { ground: '03', next_day_air: '01', '2nd_day_air': '02', '3_day_select': '12', worldwide_saver: '65', worldwide_expedited: '08' };
    for (const [service, code] of Object.entries(expected)) {
      assert.equal(trackingNumberFor('UPS', 1n, service).slice(8, 10), code);
    }
  });

  it('gives distinct numbers for distinct serials (injective per carrier, whatever the service)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CARRIERS).chain((carrier) =>
          fc.tuple(
            fc.constant(carrier),
            fc.uniqueArray(fc.tuple(serialFor(carrier), fc.constantFrom(...serviceCodes(carrier))), {
              minLength: 2,
              maxLength: 200,
              selector: ([serial]) => serial,
            }),
          ),
        ),
        ([carrier, requests]) => {
          const numbers = new Set(requests.map(([serial, service]) => trackingNumberFor(carrier, serial, service)));
          assert.equal(numbers.size, requests.length);
        },
      ),
    );
  });

  it('gives distinct numbers for neighbouring serials', () => {
    for (const carrier of CARRIERS) {
      const numbers = new Set<string>();
      const service = serviceCodes(carrier)[0]!;
      for (let serial = 1n; serial <= 10_000n; serial++) numbers.add(trackingNumberFor(carrier, serial, service));
      assert.equal(numbers.size, 10_000, carrier);
    }
  });

  it('takes serials 1..capacity (at least 10^7 − 1) and throws RangeError outside', () => {
    for (const carrier of CARRIERS) {
      const max = maxTrackingSerial(carrier);
      const service = serviceCodes(carrier)[0]!;
      assert.ok(max >= 9_999_999n, carrier);
      assert.ok(isValidTrackingNumber(carrier, trackingNumberFor(carrier, max, service)));
      assert.ok(isValidTrackingNumber(carrier, trackingNumberFor(carrier, 1n, service)));
      for (const serial of [0n, -1n, max + 1n, 10n ** 30n]) {
        assert.throws(() => trackingNumberFor(carrier, serial, service), RangeError, `${carrier} ${serial}`);
      }
    }
    assert.equal(maxTrackingSerial('UPS'), 9_999_999n);
    assert.equal(maxTrackingSerial('USPS'), 9_999_999_999n);
    assert.equal(maxTrackingSerial('FedEx'), 9_999_999_999n);
    assert.equal(maxTrackingSerial('DHL'), 99_999_999n);
  });

  it('throws RangeError for a service the carrier does not offer, TypeError for a non-bigint serial', () => {
    assert.throws(() => trackingNumberFor('UPS', 1n, 'priority_mail'), RangeError);
    assert.throws(() => trackingNumberFor('DHL', 1n, 'ground'), RangeError);
    assert.throws(() => trackingNumberFor('FedEx', 1 as unknown as bigint, 'ground'), TypeError);
    assert.throws(() => trackingNumberFor('Royal Mail' as Carrier, 1n, 'ground'), RangeError);
  });
});

describe('isValidTrackingNumber', () => {
  it('rejects any single-character change the check digit can catch, and only those', () => {
    fc.assert(
      fc.property(
        validNumber.chain(({ carrier, trackingNumber }) =>
          fc.record({
            carrier: fc.constant(carrier),
            trackingNumber: fc.constant(trackingNumber),
            position: fc.nat({ max: trackingNumber.length - 1 }),
            char: fc.constantFrom(...REPLACEMENTS),
          }),
        ),
        ({ carrier, trackingNumber, position, char }) => {
          fc.pre(trackingNumber[position] !== char);
          const changed = trackingNumber.slice(0, position) + char + trackingNumber.slice(position + 1);
          assert.equal(isValidTrackingNumber(carrier, changed), changeIsBlind(carrier, trackingNumber, position, char));
          if (!changeIsBlind(carrier, trackingNumber, position, char)) assert.deepEqual(accepting(changed), []);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('rejects a swap of adjacent different characters unless the algorithm is blind to it', () => {
    fc.assert(
      fc.property(
        validNumber.chain(({ carrier, trackingNumber }) =>
          fc.record({
            carrier: fc.constant(carrier),
            trackingNumber: fc.constant(trackingNumber),
            i: fc.integer({ min: SWAPPABLE[carrier][0], max: SWAPPABLE[carrier][1] }),
          }),
        ),
        ({ carrier, trackingNumber, i }) => {
          fc.pre(trackingNumber[i] !== trackingNumber[i + 1]);
          const swapped = swap(trackingNumber, i);
          assert.equal(isValidTrackingNumber(carrier, swapped), swapIsBlind(carrier, trackingNumber, i));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('is blind exactly where the algorithms are (their limits, not bugs)', () => {
    // UPS: a letter counts as (ASCII − 3) mod 10, so A (2) stands in for the digit 2.
    assert.ok(isValidTrackingNumber('UPS', '1Z5R893903575671A7'));
    // UPS: on a doubled position a change by 5 is invisible (2 × 5 = 10): 9 → 4 after 1Z5R8.
    assert.ok(isValidTrackingNumber('UPS', '1Z5R84390357567127'));
    // USPS: adjacent digits that differ by 5 swap unnoticed (weights 3 and 1 differ by 2).
    const usps = trackingNumberFor('USPS', 5n, 'ground_advantage');
    assert.equal(usps.slice(19, 21), '05');
    assert.ok(isValidTrackingNumber('USPS', swap(usps, 19)));
    // FedEx: sums ≡ 0 and ≡ 10 (mod 11) both give check digit 0.
    assert.ok(isValidTrackingNumber('FedEx', '000000000000'));
    assert.ok(isValidTrackingNumber('FedEx', '000000000700'));
    // DHL: mod 7 cannot tell 1 from 8 (nor 0 from 7, 2 from 9).
    assert.ok(isValidTrackingNumber('DHL', '3388810025'));
  });

  it('rejects other lengths, lower case, spaces and non-strings', () => {
    for (const carrier of CARRIERS) {
      const example = WORKED_EXAMPLES[carrier];
      assert.equal(isValidTrackingNumber(carrier, `${example}0`), false);
      assert.equal(isValidTrackingNumber(carrier, example.slice(1)), false);
      assert.equal(isValidTrackingNumber(carrier, ` ${example}`), false);
      assert.equal(isValidTrackingNumber(carrier, ''), false);
      assert.equal(isValidTrackingNumber(carrier, null as unknown as string), false);
    }
    assert.equal(isValidTrackingNumber('UPS', WORKED_EXAMPLES.UPS.toLowerCase()), false);
  });
});

describe('the carriers\' number formats', () => {
  it('accept any well-formed number with a correct check digit, not only ours, for its carrier alone', () => {
    fc.assert(
      fc.property(anyValidNumber, ({ carrier, trackingNumber }) => {
        assert.deepEqual(accepting(trackingNumber), [carrier]);
      }),
      { numRuns: 2000 },
    );
  });

  it('never overlap: an arbitrary string is valid for at most one carrier', () => {
    const strings = fc.oneof(fc.string(), fc.stringMatching(/^\d{10,22}$/), fc.stringMatching(/^1Z[0-9A-Z]{16}$/));
    fc.assert(
      fc.property(strings, (text) => {
        assert.ok(accepting(text).length <= 1, text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('formatTrackingNumber', () => {
  it('groups the worked examples as printed on labels', () => {
    assert.equal(formatTrackingNumber('UPS', WORKED_EXAMPLES.UPS), '1Z 5R8 939 03 5756 712 7');
    assert.equal(formatTrackingNumber('USPS', WORKED_EXAMPLES.USPS), '9400 1112 0620 6406 2607 87');
    assert.equal(formatTrackingNumber('FedEx', WORKED_EXAMPLES.FedEx), '9865 7878 8855');
    assert.equal(formatTrackingNumber('DHL', WORKED_EXAMPLES.DHL), '33 1881 0025');
  });

  it('only adds single spaces, and normalizeTrackingNumber undoes it', () => {
    fc.assert(
      fc.property(issuedNumber, ({ carrier, trackingNumber }) => {
        const formatted = formatTrackingNumber(carrier, trackingNumber);
        assert.equal(formatted.replaceAll(' ', ''), trackingNumber);
        assert.doesNotMatch(formatted, /^ | $| {2}/);
        assert.equal(normalizeTrackingNumber(formatted), trackingNumber);
        assert.equal(normalizeTrackingNumber(formatted.toLowerCase().replaceAll(' ', '-')), trackingNumber);
      }),
    );
  });

  it('throws RangeError for a number that is not valid for the carrier', () => {
    assert.throws(() => formatTrackingNumber('UPS', WORKED_EXAMPLES.FedEx), RangeError);
    assert.throws(() => formatTrackingNumber('DHL', '3318810026'), RangeError);
  });
});
