// ISO 3166-1 alpha-2 → numeric-3, for the country field of the UPS MaxiCode. The common
// destinations only, not the whole standard.
export const ISO_NUMERIC_COUNTRY: Readonly<Record<string, string>> = {
  // North and Central America, Caribbean
  US: '840', CA: '124', MX: '484', PR: '630', GT: '320', CR: '188', PA: '591', DO: '214', JM: '388',
  BS: '044', TT: '780',
  // South America
  BR: '076', AR: '032', CL: '152', CO: '170', PE: '604', VE: '862', EC: '218', UY: '858',
  // Western Europe
  GB: '826', IE: '372', FR: '250', DE: '276', NL: '528', BE: '056', LU: '442', CH: '756', AT: '040',
  LI: '438', MC: '492', AD: '020', IT: '380', ES: '724', PT: '620', MT: '470', GR: '300', CY: '196',
  // Northern Europe
  DK: '208', SE: '752', NO: '578', FI: '246', IS: '352', EE: '233', LV: '428', LT: '440',
  // Central and Eastern Europe
  PL: '616', CZ: '203', SK: '703', HU: '348', RO: '642', BG: '100', HR: '191', SI: '705', RS: '688',
  BA: '070', MK: '807', AL: '008', ME: '499', MD: '498', UA: '804', BY: '112', RU: '643',
  // Middle East and Caucasus
  TR: '792', IL: '376', AE: '784', SA: '682', QA: '634', KW: '414', BH: '048', OM: '512', JO: '400',
  LB: '422', GE: '268', AM: '051', AZ: '031', KZ: '398',
  // Africa
  EG: '818', MA: '504', TN: '788', DZ: '012', NG: '566', GH: '288', KE: '404', ET: '231', ZA: '710',
  // Asia and Oceania
  CN: '156', HK: '344', MO: '446', TW: '158', JP: '392', KR: '410', MN: '496', IN: '356', PK: '586',
  BD: '050', LK: '144', NP: '524', SG: '702', MY: '458', TH: '764', VN: '704', PH: '608', ID: '360',
  KH: '116', BN: '096', AU: '036', NZ: '554',
};
