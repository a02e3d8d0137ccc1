// Sample labels for the four carriers, with tracking numbers whose check digits validate.
import type { LabelData } from '../../src/render/index.ts';

const from = {
  name: 'Jürgen Müller',
  company: 'Müller Versand GmbH',
  street1: '500 Market Street',
  street2: 'Suite 12',
  city: 'San Francisco',
  state: 'CA',
  postalCode: '94105',
  country: 'US',
  phone: '+1 415 555 0100',
};

const to = {
  name: 'Ada Lovelace',
  company: 'Analytical Engines Ltd',
  street1: '350 Fifth Avenue',
  street2: 'Floor 21',
  city: 'New York',
  state: 'NY',
  postalCode: '10118',
  country: 'US',
  phone: '+1 212 555 0199',
};

const base = {
  size: '4x6' as const,
  shipDate: '2025-03-14T10:30:00Z',
  from,
  to,
  parcel: { weight: { value: 5.2, unit: 'lb' as const }, length: 12, width: 10, height: 8, dimensionUnit: 'in' as const },
  reference: 'ORDER-4711',
};

export const UPS_LABEL: LabelData = {
  ...base,
  labelId: 'lbl_0001',
  carrier: 'UPS',
  serviceCode: 'ground',
  serviceName: 'UPS GROUND',
  trackingNumber: '1Z5R89390357567127',
};

export const USPS_LABEL: LabelData = {
  ...base,
  labelId: 'lbl_0002',
  carrier: 'USPS',
  serviceCode: 'priority_mail',
  serviceName: 'USPS PRIORITY MAIL',
  trackingNumber: '9400111206206406260787',
};

export const FEDEX_LABEL: LabelData = {
  ...base,
  labelId: 'lbl_0003',
  carrier: 'FedEx',
  serviceCode: 'priority_overnight',
  serviceName: 'FEDEX PRIORITY OVERNIGHT',
  trackingNumber: '986578788855',
};

export const DHL_LABEL: LabelData = {
  ...base,
  labelId: 'lbl_0004',
  carrier: 'DHL',
  serviceCode: 'express_worldwide',
  serviceName: 'DHL EXPRESS WORLDWIDE',
  trackingNumber: '3318810025',
  to: {
    name: 'Γιώργος Παπαδόπουλος',
    street1: 'Οδός Ερμού 15',
    city: 'Αθήνα',
    postalCode: '105 63',
    country: 'GR',
    phone: '+30 21 0000 0000',
  },
};

export const ALL_CARRIERS: LabelData[] = [UPS_LABEL, USPS_LABEL, FEDEX_LABEL, DHL_LABEL];

/** A UPS label to a non-US, alphanumeric postal code (MaxiCode mode 3) in Cyrillic. */
export const UPS_INTERNATIONAL: LabelData = {
  ...UPS_LABEL,
  labelId: 'lbl_0005',
  serviceCode: 'worldwide_saver',
  serviceName: 'UPS WORLDWIDE SAVER',
  trackingNumber: '1Z5R89390357567127',
  to: {
    name: 'Иван Петров',
    company: 'ООО Ромашка',
    street1: 'ул. Тверская, д. 7',
    city: 'Москва',
    postalCode: '125009',
    country: 'RU',
  },
};

/** USPS abroad: a UPU S10 number, in a Code 128 and a plain DataMatrix instead of the IMpb's GS1 ones. */
export const USPS_INTERNATIONAL: LabelData = {
  ...USPS_LABEL,
  labelId: 'lbl_0006',
  serviceCode: 'priority_mail_international',
  serviceName: 'USPS PRIORITY MAIL INTERNATIONAL',
  trackingNumber: 'CP123456785US',
  customsForm: 'CN22',
  to: { name: 'Erika Mustermann', street1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' },
};

/** Everything that should never make the renderer throw. */
export const NASTY_LABEL: LabelData = {
  ...UPS_LABEL,
  labelId: 'lbl_nasty\u0000\u0007',
  reference: 'x'.repeat(500),
  from: {
    ...from,
    name: 'A'.repeat(500),
    company: '\u0001\u0002ctrl\u001b[31mred\u0007 \ud800 lone surrogate',
    street1: '📦🚚 Emoji Street 👍🏽 ❤️ 👨‍👩‍👧',
  },
  to: {
    name: 'محمد عبد الله',
    company: 'שלום עולם בע"מ',
    street1: 'W'.repeat(500),
    street2: '東京都千代田区 1-1',
    city: 'Ελλάδα \t\n\r Москва',
    state: 'NY',
    postalCode: '10118',
    country: 'US',
  },
};
