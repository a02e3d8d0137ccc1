// Every address a shipment takes is checked (docs/addresses.md): 400 INVALID_INPUT naming the field,
// and nothing created, on both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countRows, forEachDatabase, sampleShipment, US_SENDER, withTestApp } from '../helpers.ts';
import { LABEL_FORMATS } from '../../src/render/index.ts';

const US = { name: 'A B', street1: '1600 Pennsylvania Ave NW', city: 'Washington', state: 'DC', postalCode: '20500', country: 'US' };

forEachDatabase((database) => {
  describe('address checks on POST /v1/shipments', () => {
    const t = withTestApp(database);
    const post = (to: Record<string, unknown>, from: Record<string, unknown> = sampleShipment.from) =>
      t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from, to } });

    const refused: [string, Record<string, unknown>, string][] = [
      ['a ZIP code of another state (94105 is San Francisco)', { ...US, postalCode: '94105' }, 'to.postalCode'],
      ['a ZIP code of letters', { ...US, postalCode: 'ABCDE' }, 'to.postalCode'],
      ['a ZIP code that does not exist', { ...US, postalCode: '00000' }, 'to.postalCode'],
      ['a US address without a state', { ...US, state: undefined }, 'to.state'],
      ['a US state that does not exist', { ...US, state: 'XX' }, 'to.state'],
      ['a Canadian address without a province', { name: 'A', street1: '24 Sussex Dr', city: 'Ottawa', postalCode: 'K1M 1M4', country: 'CA' }, 'to.state'],
      ['an Australian state that does not exist', { name: 'A', street1: '1 Macquarie St', city: 'Sydney', state: 'XYZ', postalCode: '2000', country: 'AU' }, 'to.state'],
      ['a German postal code of four digits', { name: 'A', street1: 'Königstraße 1', city: 'Stuttgart', postalCode: '7017', country: 'DE' }, 'to.postalCode'],
      ['a British postcode that is not one', { name: 'A', street1: '10 Downing St', city: 'London', postalCode: 'SW1A', country: 'GB' }, 'to.postalCode'],
      ['a Japanese postal code of the wrong shape', { name: 'A', street1: '1-1 Marunouchi', city: 'Tokyo', postalCode: '1000-05', country: 'JP' }, 'to.postalCode'],
      ['an unassigned country', { ...US, country: 'ZZ' }, 'to.country'],
      ['an armed forces\' address whose city is not APO, FPO or DPO', { name: 'SGT A', street1: 'Unit 2050 Box 4190', city: 'New York', state: 'AE', postalCode: '09096', country: 'US' }, 'to.city'],
    ];
    for (const [name, to, field] of refused) {
      it(`refuses ${name}: 400 naming ${field}, nothing created`, async () => {
        const before = await countRows(t.ctx, 'shipments');
        const res = await post(to);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.ok(res.json().details.some((d: { field: string }) => d.field === field), res.body);
        assert.equal(await countRows(t.ctx, 'shipments'), before);
      });
    }

    it('a postal code may be left out only where the country has none, or where it is optional: Hong Kong and Ireland yes, Germany no', async () => {
      const hk = { name: 'A', street1: '1 Queen\'s Road Central', city: 'Central', country: 'HK' };
      const res = await post(hk);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().to.postalCode, undefined);
      const shipment = res.json();
      // Its label draws in every format, and its stamp verifies (the country code stands in for the postal code).
      const label = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'PDF' } });
      assert.equal(label.statusCode, 201, label.body);
      for (const format of LABEL_FORMATS) {
        const link = await t.request({ method: 'GET', url: `/v1/labels/${label.json().id}?format=${format}` });
        const u = new URL(link.json().url);
        assert.equal((await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` })).statusCode, 200, format);
      }
      const stamp = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id } });
      assert.equal(stamp.statusCode, 201, stamp.body);
      const verdict = await t.request({ method: 'POST', url: '/v1/stamps/verify', payload: { indicium: stamp.json().indicium } });
      assert.equal(verdict.json().genuine, true);
      // Ireland has Eircodes, but An Post delivers without one.
      const ie = await post({ name: 'Mary Murphy', street1: 'Main Street', city: 'Ballina', state: 'Co. Mayo', country: 'IE' });
      assert.equal(ie.statusCode, 201, ie.body);
      const ieLabel = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: ie.json().id, format: 'ZPL' } });
      assert.equal(ieLabel.statusCode, 201, ieLabel.body);
      const ieLink = new URL(ieLabel.json().url);
      assert.equal((await t.app.inject({ method: 'GET', url: `${ieLink.pathname}${ieLink.search}` })).statusCode, 200);
      const de = await post({ name: 'A', street1: 'Königstraße 1', city: 'Stuttgart', country: 'DE' });
      assert.equal(de.statusCode, 400);
      assert.ok(de.json().details.some((d: { field: string }) => d.field === 'to.postalCode'));
    });

    it('refuses text no bundled font can print (Thai, Devanagari), naming every field and the characters; emoji pass; nothing created', async () => {
      const before = await countRows(t.ctx, 'shipments');
      const thai = { name: 'สมชาย ใจดี', street1: '99 ถนนสุขุมวิท', city: 'Bangkok', postalCode: '10110', country: 'TH' };
      const customs = { ...sampleShipment.customs, items: [{ ...sampleShipment.customs.items[0], description: 'चमड़े का बटुआ' }] };
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, to: thai, customs } });
      assert.equal(res.statusCode, 400, res.body);
      const fields = res.json().details.map((d: { field: string }) => d.field);
      assert.deepEqual(fields.sort(), ['customs.items[0].description', 'to.name', 'to.street1']);
      const name = res.json().details.find((d: { field: string }) => d.field === 'to.name');
      assert.match(name.message, /cannot print: ส \(U\+0E2A\), ม \(U\+0E21\)/);
      assert.match(name.message, /Latin script/);
      // In a batch, under the item's own prefix.
      const batch = await t.request({ method: 'POST', url: '/v1/batches', payload: { items: [{ shipment: { ...sampleShipment, to: thai } }] } });
      assert.equal(batch.statusCode, 400, batch.body);
      assert.ok(batch.json().details.some((d: { field: string }) => d.field === 'items[0].shipment.to.name'), batch.body);
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      // The same address in Latin script, and a reference with an emoji (dropped on the label), are taken.
      const latin = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, reference: 'Gift 🎁', to: { ...thai, name: 'Somchai Jaidee', street1: '99 Sukhumvit Rd' } } });
      assert.equal(latin.statusCode, 201, latin.body);
    });

    it('refuses a field of only emoji, which would print as nothing, naming every such field; nothing created', async () => {
      const before = await countRows(t.ctx, 'shipments');
      const customs = { ...sampleShipment.customs, signer: '🎁', items: [{ ...sampleShipment.customs.items[0], description: '📦📦' }] };
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, reference: '🎁', to: { ...sampleShipment.to, name: '👩🏽‍💻', street2: '🏢' }, customs } });
      assert.equal(res.statusCode, 400, res.body);
      const details: { field: string; message: string }[] = res.json().details;
      assert.deepEqual(details.map((d) => d.field).sort(), ['customs.items[0].description', 'customs.signer', 'reference', 'to.name', 'to.street2']);
      for (const d of details) assert.match(d.message, /^would print as nothing: labels and documents leave out emoji/, d.field);
      assert.equal(await countRows(t.ctx, 'shipments'), before);
    });

    it('routes a carrier does not run are refused naming the field: USPS from abroad, APO/FPO/DPO by anyone but USPS, DHL Express Worldwide within one country', async () => {
      const apo = { name: 'SGT A', street1: 'Unit 2050 Box 4190', city: 'APO', state: 'AE', postalCode: '09001', country: 'US' };
      const before = await countRows(t.ctx, 'shipments');
      const cases: [Record<string, unknown>, string, RegExp][] = [
        // USPS takes parcels in within its network; its domestic services deliver there, its international ones abroad.
        [{ carrier: 'USPS', service: 'priority_mail' }, 'from.country', /^USPS takes parcels in only in the United States and the places its mail serves, not in DE; choose UPS, FedEx or DHL$/],
        [{ carrier: 'USPS', service: 'priority_mail_international' }, 'from.country', /^USPS takes parcels in only in the United States and the places its mail serves, not in DE/],
        [{ carrier: 'USPS', service: 'priority_mail', from: US_SENDER, to: sampleShipment.from }, 'service', /^USPS's priority_mail carries parcels from and to the United States and the places its mail serves, not to DE; choose priority_mail_express_international, priority_mail_international, first_class_package_international$/],
        [{ carrier: 'USPS', service: 'priority_mail_international', from: US_SENDER, to: US, customs: undefined }, 'service', /^USPS's priority_mail_international carries parcels from the United States and the places its mail serves to other countries, not to US; choose ground_advantage, priority_mail, priority_mail_express$/],
        [{ carrier: 'USPS', service: 'ground', from: US_SENDER, to: sampleShipment.from }, 'service', /^must be one of ground_advantage, .*; from US to DE: priority_mail_express_international, priority_mail_international, first_class_package_international$/],
        // First-Class Package International Service takes small packets: 4 lb, 24 in long, 36 in for the three sides.
        [{ carrier: 'USPS', service: 'first_class_package_international', from: US_SENDER, to: sampleShipment.from, parcel: { weight: { value: 4.1, unit: 'lb' } } }, 'parcel.weight', /^4\.1 lb is over what USPS first_class_package_international takes: at most 4 lb a package$/],
        [{ carrier: 'USPS', service: 'first_class_package_international', from: US_SENDER, to: sampleShipment.from, parcel: { weight: { value: 1, unit: 'lb' }, length: 20, width: 10, height: 7, dimensionUnit: 'in' } }, 'parcel', /^the three sides come to 37 in together, over what USPS first_class_package_international takes: at most 36 in$/],
        [{ carrier: 'UPS', service: 'ground', to: apo }, 'to.state', /only USPS serves/],
        [{ carrier: 'FedEx', service: 'ground', from: apo, to: US }, 'from.state', /only USPS serves/],
        [{ carrier: 'DHL', service: 'express_worldwide', to: { name: 'B', street1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' } }, 'service', /between countries/],
        // UPS's and FedEx's domestic services run within the US, their international ones between countries; the message names those that run the route.
        [{ carrier: 'UPS', service: 'ground' }, 'service', /^UPS's ground carries parcels within the United States and Puerto Rico, not from DE to US; choose worldwide_saver, worldwide_expedited$/],
        [{ carrier: 'FedEx', service: 'priority_overnight' }, 'service', /^FedEx's priority_overnight carries parcels within the United States and Puerto Rico, not from DE to US; choose international_priority, international_economy$/],
        [{ carrier: 'UPS', service: 'worldwide_saver', from: US_SENDER, to: US }, 'service', /^UPS's worldwide_saver carries parcels between countries; from and to are both in US; choose ground, 3_day_select, 2nd_day_air, next_day_air$/],
        [{ carrier: 'FedEx', service: 'international_economy', from: US_SENDER, to: US }, 'service', /^FedEx's international_economy carries parcels between countries; from and to are both in US; choose ground, express_saver, 2day, priority_overnight$/],
        [{ carrier: 'FedEx', service: 'ground', from: US_SENDER, to: { ...US, state: 'GU', postalCode: '96910', city: 'Hagatna' } }, 'service', /not from US to GU; choose international_priority/],
        // The United States to Puerto Rico is domestic for UPS and FedEx; a return service is suggested return services, or told there is none.
        [{ carrier: 'UPS', service: 'worldwide_saver', from: US_SENDER, to: { name: 'B', street1: '1 Calle Fortaleza', city: 'San Juan', postalCode: '00901', country: 'PR' }, customs: undefined }, 'service', /^UPS's worldwide_saver carries parcels between countries; from US to PR is within UPS's United States network; choose ground, 3_day_select, 2nd_day_air, next_day_air$/],
        // Another carrier's service: the carrier's own, and those of them that run the route.
        [{ carrier: 'UPS', service: 'priority_mail' }, 'service', /^must be one of ground, 3_day_select, 2nd_day_air, next_day_air, worldwide_saver, worldwide_expedited; from DE to US: worldwide_saver, worldwide_expedited$/],
        [{ carrier: 'DHL', service: 'ground', from: US_SENDER, to: US, customs: undefined }, 'service', /^must be one of express_worldwide, express_12; none runs from US to US: choose another carrier$/],
        // A return service carries returns only, which are made from their shipment.
        [{ carrier: 'UPS', service: 'worldwide_return' }, 'service', /^worldwide_return is UPS's return service, which carries returns only: make a return from its shipment \(POST \/v1\/shipments\/\{id\}\/returns/],
        [{ carrier: 'USPS', service: 'ground_advantage_return', from: US_SENDER, to: US, customs: undefined }, 'service', /^ground_advantage_return is USPS's return service, which carries returns only/],
      ];
      for (const [override, field, message] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, ...override } });
        assert.equal(res.statusCode, 400, res.body);
        const problem = res.json().details.find((d: { field: string }) => d.field === field);
        assert.ok(problem, res.body);
        assert.match(problem.message, message);
      }
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      // USPS takes an APO address (with its declaration), and mail from a territory it serves.
      const usps = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'USPS', service: 'priority_mail', from: US_SENDER, to: apo } });
      assert.equal(usps.statusCode, 201, usps.body);
      const guam = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'USPS', service: 'priority_mail', from: { name: 'A', street1: '1 Marine Corps Dr', city: 'Hagatna', postalCode: '96910', country: 'GU' }, to: US } });
      assert.equal(guam.statusCode, 201, guam.body);
      // DHL Express Worldwide from the Spanish mainland to the Canary Islands goes between customs territories.
      const canaries = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'DHL', service: 'express_worldwide', from: { name: 'A', street1: 'Calle Mayor 1', city: 'Madrid', postalCode: '28013', country: 'ES' }, to: { name: 'B', street1: 'Calle Triana 1', city: 'Las Palmas de Gran Canaria', postalCode: '35002', country: 'ES' } } });
      assert.equal(canaries.statusCode, 201, canaries.body);
      // Puerto Rico is in UPS's domestic network (DHL Express carries there from the mainland); the international services carry Berlin to New York.
      const sanJuan = { name: 'B', street1: '1 Calle Fortaleza', city: 'San Juan', postalCode: '00901', country: 'PR' };
      for (const payload of [
        { ...sampleShipment, carrier: 'UPS', service: 'ground', from: US_SENDER, to: sanJuan, customs: undefined },
        { ...sampleShipment, carrier: 'DHL', service: 'express_worldwide', from: US_SENDER, to: sanJuan, customs: undefined },
        { ...sampleShipment, carrier: 'UPS', service: 'worldwide_expedited' },
        { ...sampleShipment, carrier: 'FedEx', service: 'international_priority' },
      ]) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload });
        assert.equal(res.statusCode, 201, `${payload.carrier} ${payload.service}: ${res.body}`);
      }
    });

    it('a package heavier or larger than its carrier takes is refused naming the field, in the unit it was sent in', async () => {
      const before = await countRows(t.ctx, 'shipments');
      const cases: [Record<string, unknown>, Record<string, unknown>, Record<string, string>][] = [
        [{}, { weight: { value: 5000, unit: 'kg' } }, { 'parcel.weight': '5000 kg is over what UPS worldwide_saver takes: at most 150 lb (68.03 kg) a package' }],
        [{ carrier: 'FedEx', service: 'ground', from: US_SENDER, to: US, customs: undefined }, { weight: { value: 1, unit: 'kg' }, length: 10000, width: 1, height: 1, dimensionUnit: 'in' }, {
          'parcel.length': 'the longest side, 10000 in, is over what FedEx ground takes: at most 108 in',
          parcel: 'length and girth (the longest side and twice the other two) come to 10004 in, over what FedEx ground takes: at most 165 in',
        }],
        [{ carrier: 'DHL', service: 'express_worldwide' }, { weight: { value: 71, unit: 'kg' }, length: 301, width: 10, height: 10, dimensionUnit: 'cm' }, {
          'parcel.weight': '71 kg is over what DHL express_worldwide takes: at most 70 kg a package',
          'parcel.length': 'the longest side, 301 cm, is over what DHL express_worldwide takes: at most 300 cm',
        }],
        [{ carrier: 'USPS', service: 'priority_mail', from: US_SENDER, to: US }, { weight: { value: 71, unit: 'lb' }, length: 50, width: 15, height: 15, dimensionUnit: 'in' }, {
          'parcel.weight': '71 lb is over what USPS priority_mail takes: at most 70 lb a package',
          parcel: 'length and girth (the longest side and twice the other two) come to 110 in, over what USPS priority_mail takes: at most 108 in',
        }],
      ];
      for (const [override, parcel, expected] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, ...override, parcel } });
        assert.equal(res.statusCode, 400, res.body);
        assert.deepEqual(Object.fromEntries(res.json().details.map((d: { field: string; message: string }) => [d.field, d.message])), expected);
      }
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      // At the limits exactly, and Ground Advantage's 130 in of length and girth, are taken.
      const atLimits = [
        { weight: { value: 150, unit: 'lb' }, length: 108, width: 14, height: 14.5, dimensionUnit: 'in' },
        { weight: { value: 68.03, unit: 'kg' }, length: 274.32, width: 30, height: 30, dimensionUnit: 'cm' },
      ];
      for (const parcel of atLimits) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, parcel } });
        assert.equal(res.statusCode, 201, res.body);
      }
      const ground = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'USPS', service: 'ground_advantage', from: US_SENDER, to: US, parcel: { weight: { value: 70, unit: 'lb' }, length: 50, width: 20, height: 20, dimensionUnit: 'in' } } });
      assert.equal(ground.statusCode, 201, ground.body);
    });

    it('codes in the wrong form are refused in words, never as a regular expression', async () => {
      const item = { ...sampleShipment.customs.items[0], hsCode: '6109.10', originCountry: 'de', value: { amount: 10, currency: 'eur' } };
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, to: { ...sampleShipment.to, country: 'gb', phone: 'call me' }, customs: { ...sampleShipment.customs, items: [item] } } });
      assert.equal(res.statusCode, 400, res.body);
      const byField = Object.fromEntries(res.json().details.map((d: { field: string; message: string }) => [d.field, d.message]));
      assert.deepEqual(byField, {
        'to.country': 'must be a two-letter ISO 3166-1 country code in capitals, like DE or US',
        'to.phone': 'may hold only digits, spaces and + ( ) . / -',
        'customs.items[0].hsCode': 'must be 6 to 10 digits, without dots or spaces, like 610910',
        'customs.items[0].originCountry': 'must be a two-letter ISO 3166-1 country code in capitals, like DE or US',
        'customs.items[0].value.currency': 'must be a three-letter ISO 4217 currency code in capitals, like EUR or USD',
      });
      const empty = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, customs: { ...sampleShipment.customs, items: [] } } });
      assert.equal(empty.json().details[0].message, 'must not be empty');
    });

    it('names the sender\'s fields as from.*', async () => {
      const res = await post(US, { ...US, postalCode: '10118' });
      assert.equal(res.statusCode, 400);
      assert.ok(res.json().details.some((d: { field: string }) => d.field === 'from.postalCode'));
    });

    const accepted: [string, Record<string, unknown>][] = [
      ['the White House', US],
      ['a ZIP+4', { ...US, postalCode: '20500-0003' }],
      ['Puerto Rico', { name: 'A', street1: '1 Calle Fortaleza', city: 'San Juan', state: 'PR', postalCode: '00901', country: 'US' }],
      ['a British postcode in lower case without its space', { name: 'A', street1: '10 Downing St', city: 'London', postalCode: 'sw1a2aa', country: 'GB' }],
      ['a British postcode with spaces around it (spacing forgiven at either end)', { name: 'A', street1: '10 Downing St', city: 'London', postalCode: ' sw1a 2aa ', country: 'GB' }],
      ['Ontario', { name: 'A', street1: '24 Sussex Dr', city: 'Ottawa', state: 'ON', postalCode: 'K1M 1M4', country: 'CA' }],
      ['New South Wales', { name: 'A', street1: '1 Macquarie St', city: 'Sydney', state: 'NSW', postalCode: '2000', country: 'AU' }],
      ['a Japanese address with its prefecture in the city', { name: 'A', street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '100-0005', country: 'JP' }],
      ['the Netherlands', { name: 'A', street1: 'Dam 1', city: 'Amsterdam', postalCode: '1012 JS', country: 'NL' }],
      ['a Japanese postal code without its hyphen', { name: 'A', street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '1000005', country: 'JP' }],
      ['a Polish postal code without its hyphen', { name: 'A', street1: 'ul. Marszałkowska 1', city: 'Warszawa', postalCode: '00950', country: 'PL' }],
      ['Hong Kong, which has no postal codes (any value kept)', { name: 'A', street1: '1 Queen\'s Rd', city: 'Central', postalCode: '000', country: 'HK' }],
    ];
    for (const [name, to] of accepted) {
      it(`takes ${name}, and keeps the address as sent`, async () => {
        const res = await post(to);
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().to.postalCode, to.postalCode);
      });
    }
  });
});
