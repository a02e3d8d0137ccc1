// §12 customs and §13 returns: the customs-border table, every validation rule naming its field,
// CN22 against CN23 at the 300 SDR threshold (and its setting), every field of each document read
// back with pdftotext, document links that behave like label links, the CN and RETURN marks on
// labels, and return shipments. On both databases.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { crossesCustomsBorder, customsForm, DEFAULT_SDR_RATES, isCurrencyCode } from '../../src/carriers/customs.ts';
import { findService, type Carrier } from '../../src/carriers/index.ts';
import { signedLink } from '../../src/http/signed-links.ts';
import { countRows, forEachDatabase, sampleShipment, withTestApp, type TestApp } from '../helpers.ts';
import { LABEL_FORMATS, layoutLabel, renderLabel, type LabelData } from '../../src/render/index.ts';
import { darkShare, pictureOf, pdfText } from '../render/pictures.ts';

const _run = promisify(execFile);


const get = (t: TestApp, url: string) => t.app.inject({ method: 'GET', url: url.replace('http://localhost:8080', '') });

const US_FROM = { name: 'Lager Süd Inc', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' };
const FULL_CUSTOMS = {
  contentsType: 'merchandise',
  items: [
    { description: 'Ceramic mug, blue glaze', quantity: 2, netWeight: { value: 0.8, unit: 'kg' }, value: { amount: 40, currency: 'EUR' }, hsCode: '691200', originCountry: 'DE' },
    { description: 'Linen tea towel', quantity: 3, netWeight: { value: 150, unit: 'g' }, value: { amount: 24.5, currency: 'EUR' }, hsCode: '6302910010', originCountry: 'PT' },
  ],
  incoterm: 'DDP',
  nonDelivery: 'abandon',
  invoiceNumber: 'INV-2026-0042',
  licenceNumber: 'LIC-77',
  certificateNumber: 'CERT-88',
  importerVat: 'US-EIN-12-3456789',
  eori: 'DE123456789012345',
  ioss: 'IM2760000001',
  signer: 'Jürgen Müller',
};

describe('§12 customs territories', () => {
  it('is a small table: countries, the EU customs union as one, the territories written down', () => {
    const cases: [string, string, boolean][] = [
      ['US', 'US', false], ['DE', 'FR', false], ['DE', 'US', true], ['DE', 'CH', true], ['GB', 'DE', true], ['FR', 'MC', false],
      ['US', 'PR', false], ['US', 'VI', true], ['US', 'CA', true], ['FR', 'GP', true], ['DK', 'GL', true], ['NO', 'SE', true], ['IE', 'GB', true],
    ];
    for (const [from, to, crosses] of cases) assert.equal(crossesCustomsBorder({ country: from }, { country: to }), crosses, `${from} → ${to}`);
  });

  it('places inside a country with a customs or VAT border of their own are told apart by postal code; Northern Ireland takes goods from GB and the EU without one', () => {
    const at = (country: string, postalCode?: string, state?: string) => ({ country, ...(postalCode ? { postalCode } : {}), ...(state ? { state } : {}) });
    const cases: [ReturnType<typeof at>, ReturnType<typeof at>, boolean][] = [
      [at('ES', '28001'), at('ES', '35002'), true], // Madrid → Las Palmas (Canary Islands)
      [at('ES', '38002'), at('ES', '35002'), false], // within the Canary Islands
      [at('ES', '28001'), at('ES', '51001'), true], // Ceuta
      [at('DE', '10115'), at('DE', '27498'), true], // Heligoland
      [at('DE', '10115'), at('DE', '78266'), true], // Büsingen, in the Swiss customs territory…
      [at('CH', '8001'), at('DE', '78266'), false], // …so none from Switzerland
      [at('IT', '00186'), at('IT', '23041'), true], // Livigno
      [at('GR', '10552'), at('GR', '63086'), true], // Mount Athos
      [at('FI', '00100'), at('FI', '22100'), true], // Mariehamn, Åland
      [at('AX', '22100'), at('FI', '22100'), false],
      [at('GB', 'SW1A 2AA'), at('GB', 'JE2 4WE'), true], // Jersey written as GB
      [at('JE', 'JE2 4WE'), at('GB', 'JE2 4WE'), false],
      [at('DE', '10115'), at('FR', '97400'), true], // Réunion written as FR
      [at('FR', '75004'), at('FR', '97400'), true],
      [at('GB', 'SW1A 2AA'), at('IM', 'IM1 1AA'), false], // the Isle of Man is in the UK's customs territory
      [at('CH', '8001'), at('LI', '9490'), false], // Liechtenstein in Switzerland's
      [at('DE', '10115'), at('GB', 'BT1 5GS'), false], // EU → Northern Ireland
      [at('GB', 'SW1A 2AA'), at('GB', 'BT1 5GS'), false], // GB → Northern Ireland
      [at('US', '10118', 'NY'), at('GB', 'BT1 5GS'), true],
      [at('DE', '10115'), at('GB', 'SW1A 2AA'), true],
      [at('US', '10118', 'NY'), at('US', '09096', 'AE'), true], // APO: goods need a declaration
      [at('US', '09096', 'AE'), at('US', '96616', 'AP'), false],
      [at('ES', '28001'), at('ES', undefined), false], // no postal code: the country decides
    ];
    for (const [from, to, crosses] of cases) assert.equal(crossesCustomsBorder(from, to), crosses, `${JSON.stringify(from)} → ${JSON.stringify(to)}`);
  });

  it('a US address whose state is a territory is in that territory, however its country is written', () => {
    const mainland = { country: 'US', state: 'TN' };
    for (const state of ['VI', 'GU', 'AS', 'MP']) {
      assert.equal(crossesCustomsBorder(mainland, { country: 'US', state }), true, `US → US, state ${state}`);
      assert.equal(crossesCustomsBorder({ country: 'US', state }, mainland), true, `US, state ${state} → US`);
      assert.equal(crossesCustomsBorder({ country: state }, { country: ' us ', state: ` ${state.toLowerCase()} ` }), false, `${state} → US, state ${state}`);
    }
    assert.equal(crossesCustomsBorder(mainland, { country: 'US', state: 'PR' }), false);
    assert.equal(crossesCustomsBorder({ country: 'DE' }, { country: 'US', state: 'PR' }), true);
  });

  it('CN22 up to 300 SDR, CN23 above it, CN23 for a currency without a rate', () => {
    const rate = DEFAULT_SDR_RATES.EUR!;
    const at = (amount: number, currency = 'EUR') => customsForm({ contentsType: 'gift', signer: 'A', items: [{ description: 'x', quantity: 1, netWeight: { value: 1, unit: 'g' }, value: { amount, currency }, hsCode: '123456', originCountry: 'DE' }] }, DEFAULT_SDR_RATES);
    assert.equal(at(Math.floor((300 / rate) * 100) / 100), 'CN22');
    assert.equal(at(Math.ceil((300 / rate) * 100) / 100 + 0.01), 'CN23');
    assert.equal(at(1, 'ISK'), 'CN23');
    // A value declared in SDR needs no rate.
    assert.equal(at(300, 'XDR'), 'CN22');
    assert.equal(at(300.01, 'XDR'), 'CN23');
  });

  it("USPS's own rule (IMM 123.61): Priority Mail International and Express International a CN23 at any value; First-Class Package International a CN22 below 400 USD", () => {
    const at = (amount: number, service: string, currency = 'USD', carrier: Carrier = 'USPS') =>
      customsForm({ contentsType: 'gift', signer: 'A', items: [{ description: 'x', quantity: 1, netWeight: { value: 1, unit: 'g' }, value: { amount, currency }, hsCode: '123456', originCountry: 'US' }] }, DEFAULT_SDR_RATES, findService(carrier, service));
    for (const service of ['priority_mail_international', 'priority_mail_express_international']) assert.equal(at(1, service), 'CN23', service);
    assert.equal(at(399.99, 'first_class_package_international'), 'CN22');
    // 401 USD is less than 300 SDR, yet USPS's limit is its own.
    assert.ok(401 * DEFAULT_SDR_RATES.USD! < 300);
    assert.equal(at(400, 'first_class_package_international'), 'CN23');
    assert.equal(at(401, 'first_class_package_international'), 'CN23');
    const eur = DEFAULT_SDR_RATES.USD! / DEFAULT_SDR_RATES.EUR!;
    assert.equal(at(Math.floor(399 * eur), 'first_class_package_international', 'EUR'), 'CN22');
    assert.equal(at(1, 'first_class_package_international', 'ISK'), 'CN23');
    // USPS at home (an APO address), and other carriers, keep the UPU's 300 SDR: 401 USD is a CN22 there.
    assert.equal(at(401, 'priority_mail'), 'CN22');
    assert.equal(at(401, 'worldwide_saver', 'USD', 'UPS'), 'CN22');
  });

  it('currencies are ISO 4217\'s current ones: none it has withdrawn, none that is a fund, a metal or a test code', () => {
    for (const code of ['USD', 'EUR', 'JPY', 'XDR', 'XOF', 'ZWG', 'SLE', 'VES', 'VED', 'XCG']) assert.ok(isCurrencyCode(code), code);
    for (const code of ['HRK', 'SLL', 'ZWL', 'VEF', 'LTL', 'BOV', 'USN', 'XAU', 'XTS', 'XXX', 'usd', 'ABC']) assert.ok(!isCurrencyCode(code), code);
  });
});

forEachDatabase((database) => {
  describe('customs on POST /v1/shipments', () => {
    const t = withTestApp(database, { CUSTOMS_SDR_RATES: 'EUR=0.5' });

    it('Büsingen (DE 78266) and Switzerland: another country, one customs territory; an international service carries it without a declaration', async () => {
      const busingen = { name: 'Anna Keller', street1: 'Junkerstraße 86', city: 'Büsingen am Hochrhein', postalCode: '78266', country: 'DE' };
      const zurich = { name: 'Beat Huber', street1: 'Bahnhofstrasse 1', city: 'Zürich', postalCode: '8001', country: 'CH' };
      for (const [carrier, service, from, to] of [['DHL', 'express_worldwide', busingen, zurich], ['UPS', 'worldwide_saver', busingen, zurich], ['FedEx', 'international_priority', zurich, busingen]] as const) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier, service, from, to, customs: undefined } });
        assert.equal(res.statusCode, 201, `${carrier} ${service}: ${res.body}`);
        const label = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: res.json().id } });
        assert.equal(label.statusCode, 201, label.body);
        assert.equal(label.json().documents, undefined, 'no customs papers');
      }
      // From Büsingen to Berlin the parcel leaves the Swiss customs territory: a declaration is needed.
      const berlin = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'DHL', service: 'express_worldwide', from: busingen, to: { ...zurich, city: 'Berlin', postalCode: '10115', country: 'DE' }, customs: undefined } });
      assert.equal(berlin.statusCode, 400, berlin.body);
      assert.equal(berlin.json().details[0].field, 'customs');
    });

    it('Berlin to Büsingen (DE 78266), across the Swiss customs border: the label addresses it as abroad, as its CN22 does (the town in capitals, then GERMANY)', async () => {
      const busingen = { name: 'Anna Keller', street1: 'Junkerstraße 86', city: 'Büsingen am Hochrhein', postalCode: '78266', country: 'DE' };
      const s = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'DHL', service: 'express_worldwide', to: busingen } });
      assert.equal(s.statusCode, 201, s.body);
      const l = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.json().id } });
      assert.equal(l.statusCode, 201, l.body);
      const cn22 = l.json().documents.find((d: { type: string }) => d.type === 'cn22');
      assert.ok(cn22, l.body);
      const label = await pdfText((await get(t, l.json().url)).rawPayload);
      assert.match(label, /78266 BÜSINGEN AM HOCHRHEIN/, label);
      assert.doesNotMatch(label, /Büsingen am Hochrhein/);
      assert.equal(label.match(/\bGERMANY\b/g)?.length, 2, `both addresses with their country: ${label}`);
      assert.match(label, /CN22/);
      assert.match(await pdfText((await get(t, cn22.url)).rawPayload), /78266 BÜSINGEN AM HOCHRHEIN/);
    });

    it('every rule names its field, and a refused shipment creates nothing', async () => {
      const item = FULL_CUSTOMS.items[0]!;
      const withItems = (...items: object[]) => ({ ...FULL_CUSTOMS, items });
      const cases: [object, string][] = [
        [{ customs: undefined }, 'customs'],
        [{ customs: { ...FULL_CUSTOMS, contentsType: 'other' } }, 'customs.contentsExplanation'],
        [{ customs: { ...FULL_CUSTOMS, contentsType: 'lottery' } }, 'customs.contentsType'],
        [{ customs: withItems() }, 'customs.items'],
        [{ customs: withItems(...Array.from({ length: 51 }, () => ({ ...item, netWeight: { value: 1, unit: 'g' } }))) }, 'customs.items'],
        [{ customs: withItems({ ...item, description: 'x'.repeat(61) }) }, 'customs.items[0].description'],
        [{ customs: withItems({ ...item, quantity: 0 }) }, 'customs.items[0].quantity'],
        [{ customs: withItems({ ...item, quantity: 1.5 }) }, 'customs.items[0].quantity'],
        [{ customs: withItems({ ...item, value: { amount: 0, currency: 'EUR' } }) }, 'customs.items[0].value.amount'],
        [{ customs: withItems({ ...item, value: { amount: 5, currency: 'XYZ' } }) }, 'customs.items[0].value.currency'],
        // More decimals than the currency has: a document would print another value than the one declared.
        [{ customs: withItems({ ...item, value: { amount: 0.001, currency: 'EUR' } }) }, 'customs.items[0].value.amount'],
        [{ customs: withItems({ ...item, value: { amount: 1.005, currency: 'EUR' } }) }, 'customs.items[0].value.amount'],
        [{ customs: withItems({ ...item, value: { amount: 0.5, currency: 'JPY' } }) }, 'customs.items[0].value.amount'],
        [{ customs: withItems({ ...item, value: { amount: 100000.001, currency: 'EUR' } }) }, 'customs.items[0].value.amount'],
        [{ customs: withItems({ ...item, value: { amount: 2500000.4, currency: 'JPY' } }) }, 'customs.items[0].value.amount'],
        [{ customs: withItems(item, { ...item, value: { amount: 5, currency: 'USD' } }) }, 'customs.items[1].value.currency'],
        [{ customs: withItems({ ...item, hsCode: '12345' }) }, 'customs.items[0].hsCode'],
        [{ customs: withItems({ ...item, originCountry: 'XX' }) }, 'customs.items[0].originCountry'],
        [{ customs: withItems({ ...item, netWeight: { value: 2, unit: 'kg' } }) }, 'customs.items'],
        [{ customs: { ...FULL_CUSTOMS, incoterm: 'EXW' } }, 'customs.incoterm'],
        [{ customs: { ...FULL_CUSTOMS, nonDelivery: 'burn' } }, 'customs.nonDelivery'],
        [{ customs: { ...FULL_CUSTOMS, signer: undefined } }, 'customs.signer'],
        [{ customs: { ...FULL_CUSTOMS, eori: 'x'.repeat(36) } }, 'customs.eori'],
        [{ customs: { ...FULL_CUSTOMS, eori: 'hello world' } }, 'customs.eori'],
        [{ customs: { ...FULL_CUSTOMS, ioss: 'IM12345' } }, 'customs.ioss'],
      ];
      // Guam written as a US state is Guam: no way around the declaration.
      cases.push([{ to: { name: 'Maria Cruz', street1: '1 Marine Corps Dr', city: 'Hagatna', state: 'GU', postalCode: '96910', country: 'US' }, customs: undefined }, 'customs']);
      // A place told apart by its postal code, or the armed forces' post, is named in the message.
      const canaries = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: { ...sampleShipment.from, street1: 'Calle Mayor 1', city: 'Madrid', postalCode: '28013', country: 'ES' }, to: { name: 'Ana Pérez', street1: 'Calle Triana 1', city: 'Las Palmas de Gran Canaria', postalCode: '35002', country: 'ES' }, customs: undefined } });
      assert.equal(canaries.statusCode, 400, canaries.body);
      assert.match(canaries.json().details[0].message, /from ES to ES \(the Canary Islands\)/);
      const apo = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'USPS', service: 'priority_mail', from: { name: 'A', street1: '350 Fifth Avenue', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' }, to: { name: 'SGT John Smith', street1: 'Unit 2050 Box 4190', city: 'APO', state: 'AE', postalCode: '09096', country: 'US' }, customs: undefined } });
      assert.equal(apo.statusCode, 400, apo.body);
      assert.equal(apo.json().details[0].field, 'customs');
      assert.match(apo.json().details[0].message, /APO\/FPO\/DPO/);
      const before = await countRows(t.ctx, 'shipments');
      for (const [override, field] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, ...override } });
        assert.equal(res.statusCode, 400, `${field}: ${res.body.slice(0, 300)}`);
        assert.equal(res.json().details[0].field, field, res.body.slice(0, 300));
      }
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      // Every problem at once, one details entry per field: the schema's in one answer, then the rules'.
      const many = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, customs: { ...FULL_CUSTOMS, incoterm: 'EXW', items: [{ ...item, quantity: 0, hsCode: '12', value: { amount: 40, currency: 'ABC' }, originCountry: 'xx' }] } } });
      assert.equal(many.statusCode, 400);
      assert.deepEqual(
        many.json().details.map((d: { field: string }) => d.field).sort(),
        ['customs.incoterm', 'customs.items[0].hsCode', 'customs.items[0].originCountry', 'customs.items[0].quantity'],
        many.body,
      );
      const rules = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, to: { ...sampleShipment.to, postalCode: '1234' }, customs: withItems({ ...item, value: { amount: 5, currency: 'XYZ' }, originCountry: 'XX' }) } });
      assert.equal(rules.statusCode, 400);
      assert.deepEqual(rules.json().details.map((d: { field: string }) => d.field), ['to.postalCode', 'customs.items[0].value.currency', 'customs.items[0].originCountry'], rules.body);
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      // Domestic and within the EU: not needed, but kept when sent.
      const domestic = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, service: 'ground', from: US_FROM, customs: undefined } });
      assert.equal(domestic.statusCode, 201, domestic.body);
      const kept = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, service: 'ground', from: US_FROM, customs: FULL_CUSTOMS } });
      assert.equal(kept.statusCode, 201);
      assert.deepEqual(kept.json().customs, FULL_CUSTOMS);
      const intraEu = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, customs: undefined, carrier: 'DHL', service: 'express_worldwide', to: { name: 'Marie Curie', street1: '11 Rue Pierre et Marie Curie', city: 'Paris', postalCode: '75005', country: 'FR' } } });
      assert.equal(intraEu.statusCode, 201, intraEu.body);
      assert.equal(intraEu.json().customs, undefined);
    });

    it('net weights over the parcel\'s are said in the parcel\'s unit, as the lines add up', async () => {
      const item = FULL_CUSTOMS.items[0]!;
      const cases: [object, object[], string][] = [
        [{ value: 1.2, unit: 'kg' }, [{ ...item, netWeight: { value: 1201, unit: 'g' } }], 'the items\' net weights add up to 1.201 kg, more than the parcel\'s 1.2 kg'],
        [{ value: 2, unit: 'lb' }, [{ ...item, netWeight: { value: 1, unit: 'kg' } }], 'the items\' net weights add up to 2.204623 lb, more than the parcel\'s 2 lb'],
        [{ value: 5, unit: 'kg' }, [{ ...item, netWeight: { value: 5499, unit: 'g' } }], 'the items\' net weights add up to 5.499 kg, more than the parcel\'s 5 kg'],
      ];
      for (const [weight, items, message] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, parcel: { weight }, customs: { ...FULL_CUSTOMS, items } } });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().details.find((d: { field: string }) => d.field === 'customs.items')?.message, message);
      }
    });

    it('CN22 or CN23 by the 300 SDR rule with the configured rate; every field of each document read back; links like the label\'s', async () => {
      // EUR = 0.5 SDR here: 600 EUR is 300 SDR (CN22), 600.01 EUR is above (CN23).
      const labelFor = async (customs: object) => {
        const s = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, customs } });
        assert.equal(s.statusCode, 201, s.body);
        const l = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.json().id } });
        assert.equal(l.statusCode, 201, l.body);
        return l.json();
      };
      const one = (amount: number) => ({ ...FULL_CUSTOMS, items: [{ ...FULL_CUSTOMS.items[0]!, value: { amount, currency: 'EUR' } }] });
      const small = await labelFor(one(600));
      assert.deepEqual(small.documents.map((d: { type: string }) => d.type), ['cn22', 'commercial_invoice']);
      const big = await labelFor({ ...one(600.01), contentsType: 'gift' });
      assert.deepEqual(big.documents.map((d: { type: string }) => d.type), ['cn23'], 'a gift has no commercial invoice');
      assert.match(await pdfText((await get(t, small.url)).rawPayload), /CN22/, 'the label says which form goes with it');
      assert.match(await pdfText((await get(t, big.url)).rawPayload), /CN23/);

      const full = await labelFor(FULL_CUSTOMS);
      const byType = Object.fromEntries(full.documents.map((d: { type: string; url: string }) => [d.type, d.url]));
      assert.deepEqual(Object.keys(byType), ['cn22', 'commercial_invoice']);
      for (const [type, url] of Object.entries(byType) as [string, string][]) {
        const res = await get(t, url);
        assert.equal(res.statusCode, 200, res.body.slice(0, 200));
        assert.equal(res.headers['content-type'], 'application/pdf');
        const text = (await pdfText(res.rawPayload)).replace(/\s+/g, ' ');
        const expected = [
          full.trackingNumber, sampleShipment.from.name, sampleShipment.from.street1, sampleShipment.to.name, sampleShipment.to.street1, 'UNITED STATES',
          'Ceramic mug, blue glaze', 'Linen tea towel', '691200', '6302910010', 'DE', 'PT', '0.8 kg', '40.00 EUR', '24.50 EUR', '64.50 EUR', 'EUR',
          'DDP', 'INV-2026-0042', 'US-EIN-12-3456789', 'DE123456789012345', 'IM2760000001', 'Jürgen Müller', full.createdAt.slice(0, 10), '1.2 kg',
        ];
        // Unit values: 40.00 for 2 is 20.00; 24.50 for 3 is 8.1667, as 8.17 would make 24.51.
        // The UPU's forms give every weight in kilograms; the invoice keeps each line's own unit.
        const more = type === 'cn22' ? ['CN 22', 'Sale of goods', 'LIC-77', 'CERT-88', '2', '3', 'Net weight (kg)', '0.15 kg', 'Total net weight: 0.95 kg'] : ['COMMERCIAL INVOICE', 'Sale of goods', '20.00 EUR', '8.1667 EUR', '150 g'];
        for (const field of [...expected, ...more]) assert.ok(text.includes(field), `${type}: ${field} not found in ${text.slice(0, 400)}`);
        assert.ok(text.includes('UPS WORLDWIDE SAVER') && !text.includes('UPS UPS'), `${type}: the service named once`);
      }
      const cn23 = (await pdfText((await get(t, big.documents[0].url)).rawPayload)).replace(/\s+/g, ' ');
      for (const field of ['CN 23', 'Gift', 'Treat as abandoned', big.trackingNumber]) assert.ok(cn23.includes(field), `cn23: ${field}`);
      // Amounts carry their currency's own decimals: none for yen, three for Kuwaiti dinars.
      // ISO 4217's minor units, not ICU's: forints have two decimals.
      for (const [amount, currency, printed] of [[500, 'JPY', '500 JPY'], [1.234, 'KWD', '1.234 KWD'], [1234.5, 'HUF', '1234.50 HUF']] as const) {
        const priced = await labelFor({ ...FULL_CUSTOMS, items: [{ ...FULL_CUSTOMS.items[0]!, value: { amount, currency } }] });
        const invoice = priced.documents.find((d: { type: string }) => d.type === 'commercial_invoice');
        const text = (await pdfText((await get(t, invoice.url)).rawPayload)).replace(/\s+/g, ' ');
        assert.ok(text.includes(`Invoice total: ${printed}`), `${currency}: ${text.slice(text.indexOf("Total"), text.indexOf("Total") + 400)}`);
      }

      // An item lighter than a gram is not printed as 0 kg.
      const feather = await labelFor({ ...FULL_CUSTOMS, items: [{ ...FULL_CUSTOMS.items[0]!, netWeight: { value: 0.0004, unit: 'kg' } }, { ...FULL_CUSTOMS.items[1]!, netWeight: { value: 0.0005, unit: 'g' } }] });
      const featherText = (await pdfText((await get(t, feather.documents[0].url)).rawPayload)).replace(/\s+/g, ' ');
      assert.ok(featherText.includes('0.0004 kg') && featherText.includes('0.0000005 kg') && !/ 0 kg|e-\d/.test(featherText), featherText.slice(0, 600));

      // Tampered: 403. A document the label does not have: 404. Expired: 410. Invalidated: 410.
      const u = new URL(byType.cn22);
      const sig = u.searchParams.get('sig')!;
      u.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      assert.equal((await get(t, u.toString())).statusCode, 403);
      const otherType = signedLink(t.ctx.urlKey, t.ctx.config.baseUrl, 'label-documents', full.id, 'cn23', full.expiresAt);
      assert.equal((await get(t, otherType)).statusCode, 404);
      const asLabel = signedLink(t.ctx.urlKey, t.ctx.config.baseUrl, 'labels', full.id, 'cn22', full.expiresAt).replace('/downloads/labels/', '/downloads/label-documents/');
      assert.equal((await get(t, asLabel)).statusCode, 403, "a label link's signature does not open a document");
      const past = new Date(Date.now() - 60_000).toISOString();
      assert.equal((await get(t, signedLink(t.ctx.urlKey, t.ctx.config.baseUrl, 'label-documents', full.id, 'cn22', past))).statusCode, 410);
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${full.id}/invalidate` })).statusCode, 204);
      assert.equal((await get(t, byType.commercial_invoice)).statusCode, 410);
    });
  });

  describe('a US export\'s Electronic Export Information (customs.eelPfc)', () => {
    const t = withTestApp(database);
    const TO_DE = { name: 'Jürgen Müller', street1: 'Invalidenstraße 116', city: 'Berlin', postalCode: '10115', country: 'DE' };
    const TO_CA = { name: 'Jean Tremblay', street1: '111 Wellington St', city: 'Ottawa', state: 'ON', postalCode: 'K1A 0A9', country: 'CA' };
    const line = (hsCode: string, amount: number) => ({ description: 'Laptop computer', quantity: 1, netWeight: { value: 2, unit: 'kg' }, value: { amount, currency: 'USD' }, hsCode, originCountry: 'US' });
    const exportTo = (to: object, items: object[], eelPfc?: string) => ({
      ...sampleShipment,
      from: US_FROM,
      to,
      parcel: { weight: { value: 10, unit: 'kg' } },
      customs: { contentsType: 'merchandise', items, signer: 'Ada Byron', ...(eelPfc ? { eelPfc } : {}) },
    });
    const post = (body: object) => t.request({ method: 'POST', url: '/v1/shipments', payload: body });
    const documentsText = async (shipmentId: string) => {
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId } })).json();
      return Promise.all(label.documents.map(async (d: { url: string }) => (await pdfText((await get(t, d.url)).rawPayload)).replace(/\s+/g, ' ')));
    };

    it('over 2,500 USD of one HS code an ITN is required, lines of one code adding up; an exemption does not cover it; nothing is created', async () => {
      const before = await countRows(t.ctx, 'shipments');
      const cases: [object, RegExp][] = [
        [exportTo(TO_DE, [line('847130', 3000)]), /^is required: the items of HS code 847130 are worth 3000 USD, more than the 2500 USD of one Schedule B number above which Electronic Export Information is filed in AES \(15 CFR 30\.37\(a\)\); give the filing's ITN, like AES X20261129123456$/],
        [exportTo(TO_DE, [line('847130', 1500), line('847130', 1200)]), /^is required: the items of HS code 847130 are worth 2700 USD/],
        [exportTo(TO_DE, [line('847130', 3000)], 'NOEEI 30.37(a)'), /^NOEEI 30\.37\(a\) does not cover it: the items of HS code 847130/],
        [exportTo(TO_DE, [line('847130', 100)], 'AES 12345'), /^must be an AES filing's ITN, like AES X20261129123456, or an exemption, like NOEEI 30\.37\(a\)$/],
        [{ ...sampleShipment, customs: { ...sampleShipment.customs, eelPfc: 'NOEEI 30.37(a)' } }, /^is for goods leaving the United States \(15 CFR 30\); from DE to US takes none$/],
        [exportTo(TO_DE, [line('847130', 100)], 'NOEEI 30.36'), /^NOEEI 30\.36 exempts exports to Canada only; from US to DE cite NOEEI 30\.37\(a\), or the filing's ITN$/],
      ];
      for (const [body, message] of cases) {
        const res = await post(body);
        assert.equal(res.statusCode, 400, res.body);
        const problem = res.json().details.find((d: { field: string }) => d.field === 'customs.eelPfc');
        assert.ok(problem, res.body);
        assert.match(problem.message, message);
      }
      assert.equal(await countRows(t.ctx, 'shipments'), before);
    });

    it('prints the ITN, or the exemption that needs none, on the declaration and the invoice of a US export only', async () => {
      const filed = await post(exportTo(TO_DE, [line('847130', 3000)], 'AES X20261129123456'));
      assert.equal(filed.statusCode, 201, filed.body);
      assert.equal(filed.json().customs.eelPfc, 'AES X20261129123456');
      for (const text of await documentsText(filed.json().id)) assert.ok(text.includes('US export, EEI: AES X20261129123456'), text.slice(-700));
      // Two HS codes of 2,000 USD each: no filing, the value exemption printed.
      const small = await post(exportTo(TO_DE, [line('847130', 2000), line('852872', 2000)]));
      assert.equal(small.statusCode, 201, small.body);
      for (const text of await documentsText(small.json().id)) assert.ok(text.includes('US export, EEI: NOEEI 30.37(a)'), text.slice(-700));
      // To Canada none is filed whatever the value (30.36).
      const canada = await post(exportTo(TO_CA, [line('847130', 9000)]));
      assert.equal(canada.statusCode, 201, canada.body);
      for (const text of await documentsText(canada.json().id)) assert.ok(text.includes('US export, EEI: NOEEI 30.36'), text.slice(-700));
      // Another currency is not converted: the exporter files in dollars, and the documents claim no exemption.
      const euros = await post(exportTo(TO_DE, [{ ...line('847130', 9000), value: { amount: 9000, currency: 'EUR' } }]));
      assert.equal(euros.statusCode, 201, euros.body);
      for (const text of await documentsText(euros.json().id)) assert.ok(!text.includes('EEI'), text.slice(-700));
      // Nor does a shipment taken before the rule, over the limit with no filing given.
      const older = await post(exportTo(TO_DE, [line('847130', 3000)], 'AES X20261129123456'));
      const { eelPfc: _filed, ...unfiled } = older.json().customs;
      await t.ctx.db.updateTable('shipments').set({ customs: JSON.stringify(unfiled) }).where('id', '=', older.json().id).execute();
      for (const text of await documentsText(older.json().id)) assert.ok(!text.includes('EEI'), text.slice(-700));
      // An import prints no EEI line.
      const inbound = await post(sampleShipment);
      for (const text of await documentsText(inbound.json().id)) assert.ok(!text.includes('EEI'), text.slice(-700));
      // A return into the US is an import: its copy of the declaration drops the original's citation.
      const ret = (await t.request({ method: 'POST', url: `/v1/shipments/${filed.json().id}/returns`, payload: {} })).json();
      assert.equal(ret.customs.eelPfc, undefined);
    });

    it('a return from the US over the limit is an export of its own: refused without its filing, taken with it', async () => {
      const imported = await post({ ...sampleShipment, parcel: { weight: { value: 10, unit: 'kg' } }, customs: { contentsType: 'merchandise', items: [line('847130', 3000)], signer: 'Jürgen Müller' } });
      assert.equal(imported.statusCode, 201, imported.body);
      const bare = await t.request({ method: 'POST', url: `/v1/shipments/${imported.json().id}/returns`, payload: {} });
      assert.equal(bare.statusCode, 400, bare.body);
      assert.equal(bare.json().details[0].field, 'customs.eelPfc');
      const customs = { ...imported.json().customs, contentsType: 'returned_goods', eelPfc: 'AES X20261129654321' };
      const filed = await t.request({ method: 'POST', url: `/v1/shipments/${imported.json().id}/returns`, payload: { customs } });
      assert.equal(filed.statusCode, 201, filed.body);
      assert.equal(filed.json().customs.eelPfc, 'AES X20261129654321');
    });
  });

  describe('POST /v1/shipments/{id}/returns', () => {
    const t = withTestApp(database);

    it('a return\'s declaration puts the parties\' numbers on the right parties and drops the sale\'s terms', async () => {
      const original = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, customs: FULL_CUSTOMS } })).json();
      const ret = (await t.request({ method: 'POST', url: `/v1/shipments/${original.id}/returns`, payload: {} })).json();
      const { eori, importerVat, incoterm, nonDelivery, invoiceNumber, ioss, ...goods } = FULL_CUSTOMS;
      // The German sender imports the return: its EORI is the importer's number; the US customer's
      // number, the DDP and "abandon" of the sale and its invoice number do not carry over.
      assert.deepEqual(ret.customs, { ...goods, contentsType: 'returned_goods', importerVat: eori, signer: sampleShipment.to.name });
      assert.ok(importerVat && incoterm && nonDelivery && invoiceNumber && ioss);
    });

    it('a return\'s customs documents quote the waybill its goods were exported under (the original\'s active label), for returned-goods relief', async () => {
      const original = (await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment })).json();
      const first = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: original.id } })).json();
      // The label that went out is the active one: a label invalidated before it is not the export's.
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${first.id}/invalidate` })).statusCode, 204);
      const exported = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: original.id } })).json();
      const ret = (await t.request({ method: 'POST', url: `/v1/shipments/${original.id}/returns`, payload: {} })).json();
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: ret.id } })).json();
      const quoted = `Returned goods: exported under waybill ${exported.trackingNumber} on ${exported.createdAt.slice(0, 10)}`;
      assert.equal(label.documents.length, 2);
      for (const doc of label.documents) {
        const text = (await pdfText((await get(t, doc.url)).rawPayload)).replace(/\s+/g, ' ');
        assert.ok(text.includes(quoted), `${doc.type}: ${text.slice(-600)}`);
        assert.ok(!text.includes(first.trackingNumber), `${doc.type} does not quote the invalidated label`);
      }
      // The original's own documents quote nothing of the kind; a return of a shipment never labelled quotes no waybill.
      const own = (await pdfText((await get(t, exported.documents[0].url)).rawPayload)).replace(/\s+/g, ' ');
      assert.ok(!own.includes('Returned goods: exported'));
      const unsent = (await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment })).json();
      const unsentReturn = (await t.request({ method: 'POST', url: `/v1/shipments/${unsent.id}/returns`, payload: {} })).json();
      const unsentLabel = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: unsentReturn.id } })).json();
      assert.ok(!(await pdfText((await get(t, unsentLabel.documents[0].url)).rawPayload)).includes('exported under waybill'));
    });

    it('swaps the addresses, takes the return service, copies customs as returned goods across a border, and marks the label RETURN in every format', async () => {
      const original = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, messages: ['Gift'] } })).json();
      const before = (await t.request({ method: 'GET', url: `/v1/shipments/${original.id}` })).body;
      const res = await t.request({ method: 'POST', url: `/v1/shipments/${original.id}/returns`, payload: {} });
      assert.equal(res.statusCode, 201, res.body);
      const ret = res.json();
      assert.equal(ret.returnOf, original.id);
      assert.deepEqual([ret.from, ret.to, ret.parcel, ret.carrier, ret.service], [original.to, original.from, original.parcel, 'UPS', 'worldwide_return']);
      // Signed by who sends the goods back: the customer.
      assert.deepEqual(ret.customs, { ...original.customs, contentsType: 'returned_goods', signer: original.to.name });
      assert.equal(ret.reference, original.reference);
      assert.equal((await t.request({ method: 'GET', url: `/v1/shipments/${original.id}` })).body, before, 'the original gains nothing');
      assert.deepEqual((await t.request({ method: 'GET', url: `/v1/shipments/${ret.id}` })).json(), ret);
      const event = await t.ctx.db.selectFrom('domain_events').select('data').where('shipment_id', '=', ret.id).where('type', '=', 'shipment.created').executeTakeFirstOrThrow();
      assert.equal(JSON.parse(event.data).returnOf, original.id);
      assert.equal(JSON.parse(event.data).customs.contentsType, 'returned_goods');

      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: ret.id } })).json();
      assert.ok(label.documents.some((d: { type: string }) => d.type === 'commercial_invoice'), 'returned goods travel with an invoice');
      assert.match(await pdfText((await get(t, label.url)).rawPayload), /RETURN/);
      const zpl = (await get(t, (await t.request({ method: 'GET', url: `/v1/labels/${label.id}?format=ZPL` })).json().url)).body;
      assert.ok(zpl.includes('^FDRETURN^FS'), 'ZPL prints RETURN');
      // Every other format, by pixels: the RETURN box holds ink, and is not there on the same label as a non-return.
      const row = await t.ctx.db.selectFrom('labels').select('label_data').where('id', '=', label.id).executeTakeFirstOrThrow();
      // A short banner, so nothing else reaches where the mark stands.
      const data = { ...(JSON.parse(row.label_data) as LabelData), serviceName: 'UPS' };
      assert.equal(data.isReturn, true);
      const mark = layoutLabel(data).primitives.find((p) => p.kind === 'text' && p.text === 'RETURN');
      assert.ok(mark && mark.kind === 'text');
      const box = { x: mark.x - 22, y: mark.y - 9, w: 44, h: 10 };
      for (const format of LABEL_FORMATS.filter((f) => f !== 'PDF' && f !== 'ZPL')) {
        const ink = darkShare(await pictureOf(format, (await renderLabel(data, format)).body, 288), 288, box);
        const none = darkShare(await pictureOf(format, (await renderLabel({ ...data, isReturn: false }, format)).body, 288), 288, box);
        assert.ok(ink > 0.15 && none < ink / 3, `${format}: RETURN printed (${ink.toFixed(2)} dark, ${none.toFixed(2)} without it)`);
      }

      // A return of a return is 409; another carrier's service is 400; the body is checked.
      const again = await t.request({ method: 'POST', url: `/v1/shipments/${ret.id}/returns`, payload: {} });
      assert.equal(again.statusCode, 409);
      const otherCarriers = await t.request({ method: 'POST', url: `/v1/shipments/${original.id}/returns`, payload: { service: 'priority_mail' } });
      assert.equal(otherCarriers.json().details[0].field, 'service');
      // A return may go by any of the carrier's services that run its route, its return services too.
      assert.match(otherCarriers.json().details[0].message, /^must be one of ground, .*, worldwide_return; from US to DE: .*worldwide_return$/);
      assert.equal((await t.request({ method: 'POST', url: `/v1/shipments/${original.id}/returns`, payload: { colour: 'red' } })).statusCode, 400);
      const other = await t.newAccount();
      assert.equal((await t.app.inject({ method: 'POST', url: `/v1/shipments/${original.id}/returns`, headers: { 'x-api-key': other.apiKey }, payload: {} })).statusCode, 404);
      // A domestic return carries no customs; a service and reference may be given.
      const domestic = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: US_FROM, customs: undefined, carrier: 'USPS', service: 'priority_mail' } })).json();
      const domesticReturn = (await t.request({ method: 'POST', url: `/v1/shipments/${domestic.id}/returns`, payload: { service: 'priority_mail', reference: 'RMA 7' } })).json();
      assert.deepEqual([domesticReturn.service, domesticReturn.reference, domesticReturn.customs], ['priority_mail', 'RMA 7', undefined]);
      const defaultService = (await t.request({ method: 'POST', url: `/v1/shipments/${domestic.id}/returns` })).json();
      assert.equal(defaultService.service, 'ground_advantage_return');
      const uspsLabel = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: defaultService.id } });
      assert.equal(uspsLabel.statusCode, 201, uspsLabel.body);
      // USPS carries parcels abroad but takes none in there, and a return keeps its carrier: 409, saying what to do, nothing made.
      const abroadByUsps = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: US_FROM, to: sampleShipment.from, carrier: 'USPS', service: 'priority_mail_international' } })).json();
      const shipmentsBefore = await countRows(t.ctx, 'shipments');
      const refused = await t.request({ method: 'POST', url: `/v1/shipments/${abroadByUsps.id}/returns`, payload: {} });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().message, `shipment ${abroadByUsps.id} went by USPS to DE, where USPS takes no parcels in, and a return keeps its carrier: send it back as a new shipment with UPS, FedEx or DHL`);
      assert.equal(await countRows(t.ctx, 'shipments'), shipmentsBefore);
    });

    it('a return takes the carrier\'s return service for its route: FedEx international_return between countries, ground_return within the US; one that does not run the route is 400', async () => {
      const abroad = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'FedEx', service: 'international_priority' } })).json();
      const home = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: US_FROM, customs: undefined, carrier: 'FedEx', service: 'ground' } })).json();
      const abroadReturn = await t.request({ method: 'POST', url: `/v1/shipments/${abroad.id}/returns`, payload: {} });
      assert.equal(abroadReturn.statusCode, 201, abroadReturn.body);
      assert.equal(abroadReturn.json().service, 'international_return');
      const homeReturn = await t.request({ method: 'POST', url: `/v1/shipments/${home.id}/returns`, payload: {} });
      assert.equal(homeReturn.statusCode, 201, homeReturn.body);
      assert.equal(homeReturn.json().service, 'ground_return');
      // The mainland to Puerto Rico is domestic for FedEx: so is its return.
      const sanJuan = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: US_FROM, to: { name: 'B', street1: '1 Calle Fortaleza', city: 'San Juan', postalCode: '00901', country: 'PR' }, customs: undefined, carrier: 'FedEx', service: 'ground' } })).json();
      assert.equal((await t.request({ method: 'POST', url: `/v1/shipments/${sanJuan.id}/returns`, payload: {} })).json().service, 'ground_return');
      const before = await countRows(t.ctx, 'shipments');
      const wrongWay = await t.request({ method: 'POST', url: `/v1/shipments/${abroad.id}/returns`, payload: { service: 'ground_return' } });
      assert.equal(wrongWay.statusCode, 400, wrongWay.body);
      assert.deepEqual(wrongWay.json().details, [{ field: 'service', message: "FedEx's ground_return carries parcels within the United States and Puerto Rico, not from US to DE; choose international_return" }]);
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      // The return's label prints the international return's banner.
      const label = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: abroadReturn.json().id } });
      assert.equal(label.statusCode, 201, label.body);
      assert.match(await pdfText((await get(t, label.json().url)).rawPayload), /FEDEX INTL RETURN/);
    });
  });
});
