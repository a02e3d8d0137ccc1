// The US street-line parser: parse-address's parseLocation, with its dispatch regexes compiled once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { parseStreet } from '../../src/addresses/standard.ts';

const parser = createRequire(import.meta.url)('parse-address') as { parseLocation(text: string): unknown };
const WORDS = ['100', '12B', 'N', 'NW', 'MAIN', 'ST', 'AVENUE', 'AND', 'AT', '&', '@', 'PO', 'P.O.', 'BOX', 'P', 'O', 'POST', 'OFFICE', 'PMB', 'SUITE', '5', 'APT', '#', 'FIFTH', 'BROADWAY', 'HWY', '66', 'RR', '-', 'CORNER', 'BATH', 'SANDY'];

test('parseStreet reads every street line exactly as parseLocation does', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }), fc.constantFrom(' ', '  ', ', '), (words, gap) => {
      const line = words.join(gap);
      assert.deepEqual(parseStreet(line), parser.parseLocation(line), line);
    }),
    { numRuns: 3000 },
  );
  for (const line of ['1600 PENNSYLVANIA AVENUE NORTHWEST', 'PO BOX 1234', 'P O BOX 9', 'POST OFFICE BOX 12', 'MAIN ST AND 1ST AVE', '5TH AVE & BROADWAY', '500 MARKET STREET SUITE 200']) {
    assert.deepEqual(parseStreet(line), parser.parseLocation(line), line);
  }
});
