import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Carrier } from '../../src/carriers/index.ts';
import { dhlCheckDigit } from '../../src/carriers/dhl.ts';
import { fedexCheckDigit } from '../../src/carriers/fedex.ts';
import { upsCheckDigit } from '../../src/carriers/ups.ts';
import { s10CheckDigit, uspsCheckDigit } from '../../src/carriers/usps.ts';
import {
  CARRIERS,
  SERVICES,
  formatTrackingNumber,
  isValidTrackingNumber,
  maxTrackingSerial,
  normalizeTrackingNumber,
  trackingNumberFor,
  trackingSerials,
} from '../../src/carriers/index.ts';

const WORKED_EXAMPLES: Record<Carrier, string> = {
  UPS: '1Z5R89390357567127',
  USPS: '9400111206206406260787',
  FedEx: '986578788855',
  DHL: '3318810025',
};

const serviceCodes = (carrier: Carrier) => SERVICES[carrier].map((s) => s.code);

/** Serials up to the service's capacity, with the realistic range below 10^7 drawn half the time. */
const serialFor = (carrier: Carrier, service: string) =>
  fc.oneof(fc.bigInt({ min: 1n, max: 9_999_999n }), fc.bigInt({ min: 1n, max: maxTrackingSerial(carrier, service) }));

const issued = fc.constantFrom(...CARRIERS).chain((carrier) =>
  fc.constantFrom(...serviceCodes(carrier)).chain((service) =>
    fc.record({
      carrier: fc.constant(carrier),
      serial: serialFor(carrier, service),
      service: fc.constant(service),
    }),
  ),
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
  numbered('USPS', /^[A-Z]{2}\d{8}$/, (p) => `${p}${s10CheckDigit(p.slice(2))}US`),
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

/** UPU S10, as the standard states it: weights 8 6 4 2 3 5 9 7 over the serial, 11 less the sum mod 11, 10 → 0, 11 → 5. */
const S10 = /^[A-Z]{2}\d{9}US$/;
function s10Holds(n: string): boolean {
  if (!S10.test(n)) return false;
  const sum = [...n.slice(2, 10)].reduce((a, d, i) => a + Number(d) * [8, 6, 4, 2, 3, 5, 9, 7][i]!, 0);
  const check = 11 - (sum % 11);
  return (check === 10 ? 0 : check === 11 ? 5 : check) === Number(n[10]);
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
      // The S10 check digit leaves the service indicator out, and gives 5 for sums of 0 and 6 mod 11.
      return S10.test(before) && s10Holds(after);
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
/** The same for a number: an S10 one's serial and check digit, 2 to 10. */
const swappable = (carrier: Carrier, n: string): [number, number] => (carrier === 'USPS' && S10.test(n) ? [2, 9] : SWAPPABLE[carrier]);

function swapIsBlind(carrier: Carrier, before: string, i: number): boolean {
  const [a, b] = [before[i]!, before[i + 1]!];
  switch (carrier) {
    case 'UPS':
      return upsValue(a) === upsValue(b);
    case 'USPS':
      return S10.test(before) ? s10Holds(swap(before, i)) : Math.abs(Number(a) - Number(b)) === 5;
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

  it('has the carrier shape: UPS 1Z+18, USPS 22 digits (abroad the UPU S10 form), FedEx 12 digits, DHL 10 digits', () => {
    fc.assert(
      fc.property(issued, ({ carrier, serial, service }) => {
        const trackingNumber = trackingNumberFor(carrier, serial, service);
        const code = SERVICES[carrier].find((s) => s.code === service)!.carrierCode;
        const shape: Record<Carrier, RegExp> = {
          UPS: new RegExp(`^1Z5R8939${code}\\d{8}$`),
          USPS: /^[A-Z]{2}$/.test(code) ? new RegExp(`^${code}\\d{9}US$`) : new RegExp(`^94${code}112062\\d{11}$`),
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
            fc.uniqueArray(fc.constantFrom(...serviceCodes(carrier)).chain((service) => fc.tuple(serialFor(carrier, service), fc.constant(service))), {
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
      for (const service of serviceCodes(carrier)) {
        const max = maxTrackingSerial(carrier, service);
        assert.ok(max >= 9_999_999n, carrier);
        assert.ok(isValidTrackingNumber(carrier, trackingNumberFor(carrier, max, service)));
        assert.ok(isValidTrackingNumber(carrier, trackingNumberFor(carrier, 1n, service)));
        for (const serial of [0n, -1n, max + 1n, 10n ** 30n]) {
          assert.throws(() => trackingNumberFor(carrier, serial, service), RangeError, `${carrier} ${service} ${serial}`);
        }
      }
    }
    assert.equal(maxTrackingSerial('UPS', 'ground'), 9_999_999n);
    assert.equal(maxTrackingSerial('USPS', 'priority_mail'), 9_999_999_999n);
    assert.equal(maxTrackingSerial('USPS', 'priority_mail_international'), 99_999_999n);
    assert.equal(maxTrackingSerial('FedEx', 'ground'), 9_999_999_999n);
    assert.equal(maxTrackingSerial('DHL', 'express_worldwide'), 99_999_999n);
  });

  it("draws each carrier's serials from one counter, and USPS's international services (S10 numbers) from one of their own", () => {
    assert.deepEqual(trackingSerials('USPS', 'priority_mail'), { counter: 'tracking:USPS', maxSerial: 9_999_999_999n });
    for (const service of ['priority_mail_express_international', 'priority_mail_international', 'first_class_package_international']) {
      assert.deepEqual(trackingSerials('USPS', service), { counter: 'tracking:USPS:S10', maxSerial: 99_999_999n });
    }
    assert.equal(trackingSerials('UPS', 'worldwide_saver').counter, 'tracking:UPS');
    assert.equal(trackingSerials('DHL', 'express_12').counter, 'tracking:DHL');
    assert.throws(() => trackingSerials('USPS', 'ground'), RangeError);
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
            i: fc.integer({ min: swappable(carrier, trackingNumber)[0], max: swappable(carrier, trackingNumber)[1] }),
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
    // USPS abroad (S10): the service indicator is outside the check, and sums of 0 and 6 mod 11 both give 5.
    assert.ok(isValidTrackingNumber('USPS', 'EC123456785US'));
    assert.ok(isValidTrackingNumber('USPS', 'CP323456785US'));
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

describe("USPS's mod 10 check digit, as a SCAN form's number takes it", () => {
  it('worked by hand: 9475, 16 zeros and 1 weigh 9·3 + 4·1 + 7·3 + 5·1 + 1·3 = 60, so 0; with 2 at the end 63, so 7', () => {
    assert.equal(uspsCheckDigit(`9475${'0'.repeat(16)}1`), 0);
    assert.equal(uspsCheckDigit(`9475${'0'.repeat(16)}2`), 7);
  });
});

describe("USPS's international numbers (UPU S10)", () => {
  // Worked by hand from the standard: 1·8 + 2·6 + 3·4 + 4·2 + 5·3 + 6·5 + 7·9 + 8·7 = 204, 204 mod 11 = 6,
  // 11 − 6 = 5; and 4·8 + 7·6 + 3·4 + 1·2 + 2·3 + 4·5 + 8·9 + 2·7 = 200, mod 11 = 2, 11 − 2 = 9.
  const PMI = 'CP123456785US';
  const PMEI = 'EC473124829US';

  it('are what our serials produce: the service indicator, 8 digits, the check digit and US', () => {
    assert.equal(trackingNumberFor('USPS', 12_345_678n, 'priority_mail_international'), PMI);
    assert.equal(trackingNumberFor('USPS', 47_312_482n, 'priority_mail_express_international'), PMEI);
    assert.equal(trackingNumberFor('USPS', 1n, 'first_class_package_international'), 'LX000000014US');
    assert.deepEqual(accepting(PMI), ['USPS']);
    assert.deepEqual(accepting(PMEI), ['USPS']);
  });

  it('turn a check of 10 into 0 and 11 into 5', () => {
    // 8·1 = 8 → 11 − 8 = 3; 6·1 + 7·... : serials chosen so the sum is 1 mod 11 (check 0) and 0 mod 11 (check 5).
    const sum = (serial: string) => [...serial].reduce((a, d, i) => a + Number(d) * [8, 6, 4, 2, 3, 5, 9, 7][i]!, 0);
    const ten = Array.from({ length: 100_000 }, (_, i) => String(i).padStart(8, '0')).find((d) => sum(d) % 11 === 1)!;
    const eleven = Array.from({ length: 100_000 }, (_, i) => String(i + 1).padStart(8, '0')).find((d) => sum(d) % 11 === 0)!;
    assert.equal(s10CheckDigit(ten), 0);
    assert.equal(s10CheckDigit(eleven), 5);
  });

  it('print as the UPU groups them', () => {
    assert.equal(formatTrackingNumber('USPS', PMI), 'CP 123 456 785 US');
  });
});
