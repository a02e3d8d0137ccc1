// The shipments the benchmarks send are ones the service takes: a benchmark is not part of `npm test`,
// so a rule that refuses its fixture (UPS ground from Berlin to New York, once routes were checked)
// would otherwise be found only when someone runs `npm run bench`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkShipment, type NewShipment } from '../../src/shipments/service.ts';
import { BENCH_SHIPMENT } from '../../bench/lib.ts';
import { shipment as labelsShipment } from '../../bench/labels.bench.ts';
import { shipment as printFilesShipment } from '../../bench/print-files.bench.ts';
import { SHIPMENT as addressesShipment } from '../../bench/addresses.bench.ts';
import { shipmentBody } from '../../bench/day.bench.ts';

describe("the benchmarks' shipments", () => {
  it('every fixture passes every check of a new shipment', () => {
    for (const [name, s] of Object.entries({ BENCH_SHIPMENT, labelsShipment, printFilesShipment, addressesShipment })) {
      assert.doesNotThrow(() => checkShipment(s as unknown as NewShipment), name);
    }
  });

  it("the day's shipments, for every account, pass them too", () => {
    let seed = 20260115;
    const rng = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 200; i++) {
      const body = JSON.parse(shipmentBody(rng, i % 8)) as NewShipment;
      assert.doesNotThrow(() => checkShipment(body), JSON.stringify(body));
    }
  });
});
