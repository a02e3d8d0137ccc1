// The one table of ISO 3166-1 countries: the assigned alpha-2 codes an address may name, their numeric
// codes (MaxiCode and PDF417 carry them) and the English short names printed on labels. Generated once
// from Debian's iso-codes data (iso_3166-1.json), with the common name where ISO's is inverted or
// long (VATICAN CITY, FALKLAND ISLANDS, BRITISH VIRGIN ISLANDS, …); test/core/countries.test.ts holds
// it equal to the i18n-iso-countries package's codes and numbers.

const TABLE = `
AD 020 ANDORRA
AE 784 UNITED ARAB EMIRATES
AF 004 AFGHANISTAN
AG 028 ANTIGUA AND BARBUDA
AI 660 ANGUILLA
AL 008 ALBANIA
AM 051 ARMENIA
AO 024 ANGOLA
AQ 010 ANTARCTICA
AR 032 ARGENTINA
AS 016 AMERICAN SAMOA
AT 040 AUSTRIA
AU 036 AUSTRALIA
AW 533 ARUBA
AX 248 ÅLAND ISLANDS
AZ 031 AZERBAIJAN
BA 070 BOSNIA AND HERZEGOVINA
BB 052 BARBADOS
BD 050 BANGLADESH
BE 056 BELGIUM
BF 854 BURKINA FASO
BG 100 BULGARIA
BH 048 BAHRAIN
BI 108 BURUNDI
BJ 204 BENIN
BL 652 SAINT BARTHÉLEMY
BM 060 BERMUDA
BN 096 BRUNEI DARUSSALAM
BO 068 BOLIVIA
BQ 535 BONAIRE, SINT EUSTATIUS AND SABA
BR 076 BRAZIL
BS 044 BAHAMAS
BT 064 BHUTAN
BV 074 BOUVET ISLAND
BW 072 BOTSWANA
BY 112 BELARUS
BZ 084 BELIZE
CA 124 CANADA
CC 166 COCOS ISLANDS
CD 180 DEMOCRATIC REPUBLIC OF THE CONGO
CF 140 CENTRAL AFRICAN REPUBLIC
CG 178 CONGO
CH 756 SWITZERLAND
CI 384 CÔTE D'IVOIRE
CK 184 COOK ISLANDS
CL 152 CHILE
CM 120 CAMEROON
CN 156 CHINA
CO 170 COLOMBIA
CR 188 COSTA RICA
CU 192 CUBA
CV 132 CABO VERDE
CW 531 CURAÇAO
CX 162 CHRISTMAS ISLAND
CY 196 CYPRUS
CZ 203 CZECHIA
DE 276 GERMANY
DJ 262 DJIBOUTI
DK 208 DENMARK
DM 212 DOMINICA
DO 214 DOMINICAN REPUBLIC
DZ 012 ALGERIA
EC 218 ECUADOR
EE 233 ESTONIA
EG 818 EGYPT
EH 732 WESTERN SAHARA
ER 232 ERITREA
ES 724 SPAIN
ET 231 ETHIOPIA
FI 246 FINLAND
FJ 242 FIJI
FK 238 FALKLAND ISLANDS
FM 583 MICRONESIA
FO 234 FAROE ISLANDS
FR 250 FRANCE
GA 266 GABON
GB 826 UNITED KINGDOM
GD 308 GRENADA
GE 268 GEORGIA
GF 254 FRENCH GUIANA
GG 831 GUERNSEY
GH 288 GHANA
GI 292 GIBRALTAR
GL 304 GREENLAND
GM 270 GAMBIA
GN 324 GUINEA
GP 312 GUADELOUPE
GQ 226 EQUATORIAL GUINEA
GR 300 GREECE
GS 239 SOUTH GEORGIA AND THE SOUTH SANDWICH ISLANDS
GT 320 GUATEMALA
GU 316 GUAM
GW 624 GUINEA-BISSAU
GY 328 GUYANA
HK 344 HONG KONG
HM 334 HEARD ISLAND AND MCDONALD ISLANDS
HN 340 HONDURAS
HR 191 CROATIA
HT 332 HAITI
HU 348 HUNGARY
ID 360 INDONESIA
IE 372 IRELAND
IL 376 ISRAEL
IM 833 ISLE OF MAN
IN 356 INDIA
IO 086 BRITISH INDIAN OCEAN TERRITORY
IQ 368 IRAQ
IR 364 IRAN
IS 352 ICELAND
IT 380 ITALY
JE 832 JERSEY
JM 388 JAMAICA
JO 400 JORDAN
JP 392 JAPAN
KE 404 KENYA
KG 417 KYRGYZSTAN
KH 116 CAMBODIA
KI 296 KIRIBATI
KM 174 COMOROS
KN 659 SAINT KITTS AND NEVIS
KP 408 NORTH KOREA
KR 410 SOUTH KOREA
KW 414 KUWAIT
KY 136 CAYMAN ISLANDS
KZ 398 KAZAKHSTAN
LA 418 LAOS
LB 422 LEBANON
LC 662 SAINT LUCIA
LI 438 LIECHTENSTEIN
LK 144 SRI LANKA
LR 430 LIBERIA
LS 426 LESOTHO
LT 440 LITHUANIA
LU 442 LUXEMBOURG
LV 428 LATVIA
LY 434 LIBYA
MA 504 MOROCCO
MC 492 MONACO
MD 498 MOLDOVA
ME 499 MONTENEGRO
MF 663 SAINT MARTIN (FRENCH PART)
MG 450 MADAGASCAR
MH 584 MARSHALL ISLANDS
MK 807 NORTH MACEDONIA
ML 466 MALI
MM 104 MYANMAR
MN 496 MONGOLIA
MO 446 MACAO
MP 580 NORTHERN MARIANA ISLANDS
MQ 474 MARTINIQUE
MR 478 MAURITANIA
MS 500 MONTSERRAT
MT 470 MALTA
MU 480 MAURITIUS
MV 462 MALDIVES
MW 454 MALAWI
MX 484 MEXICO
MY 458 MALAYSIA
MZ 508 MOZAMBIQUE
NA 516 NAMIBIA
NC 540 NEW CALEDONIA
NE 562 NIGER
NF 574 NORFOLK ISLAND
NG 566 NIGERIA
NI 558 NICARAGUA
NL 528 NETHERLANDS
NO 578 NORWAY
NP 524 NEPAL
NR 520 NAURU
NU 570 NIUE
NZ 554 NEW ZEALAND
OM 512 OMAN
PA 591 PANAMA
PE 604 PERU
PF 258 FRENCH POLYNESIA
PG 598 PAPUA NEW GUINEA
PH 608 PHILIPPINES
PK 586 PAKISTAN
PL 616 POLAND
PM 666 SAINT PIERRE AND MIQUELON
PN 612 PITCAIRN
PR 630 PUERTO RICO
PS 275 PALESTINE
PT 620 PORTUGAL
PW 585 PALAU
PY 600 PARAGUAY
QA 634 QATAR
RE 638 RÉUNION
RO 642 ROMANIA
RS 688 SERBIA
RU 643 RUSSIAN FEDERATION
RW 646 RWANDA
SA 682 SAUDI ARABIA
SB 090 SOLOMON ISLANDS
SC 690 SEYCHELLES
SD 729 SUDAN
SE 752 SWEDEN
SG 702 SINGAPORE
SH 654 SAINT HELENA, ASCENSION AND TRISTAN DA CUNHA
SI 705 SLOVENIA
SJ 744 SVALBARD AND JAN MAYEN
SK 703 SLOVAKIA
SL 694 SIERRA LEONE
SM 674 SAN MARINO
SN 686 SENEGAL
SO 706 SOMALIA
SR 740 SURINAME
SS 728 SOUTH SUDAN
ST 678 SAO TOME AND PRINCIPE
SV 222 EL SALVADOR
SX 534 SINT MAARTEN (DUTCH PART)
SY 760 SYRIA
SZ 748 ESWATINI
TC 796 TURKS AND CAICOS ISLANDS
TD 148 CHAD
TF 260 FRENCH SOUTHERN TERRITORIES
TG 768 TOGO
TH 764 THAILAND
TJ 762 TAJIKISTAN
TK 772 TOKELAU
TL 626 TIMOR-LESTE
TM 795 TURKMENISTAN
TN 788 TUNISIA
TO 776 TONGA
TR 792 TÜRKIYE
TT 780 TRINIDAD AND TOBAGO
TV 798 TUVALU
TW 158 TAIWAN
TZ 834 TANZANIA
UA 804 UKRAINE
UG 800 UGANDA
UM 581 UNITED STATES MINOR OUTLYING ISLANDS
US 840 UNITED STATES
UY 858 URUGUAY
UZ 860 UZBEKISTAN
VA 336 VATICAN CITY
VC 670 SAINT VINCENT AND THE GRENADINES
VE 862 VENEZUELA
VG 092 BRITISH VIRGIN ISLANDS
VI 850 U.S. VIRGIN ISLANDS
VN 704 VIETNAM
VU 548 VANUATU
WF 876 WALLIS AND FUTUNA
WS 882 SAMOA
YE 887 YEMEN
YT 175 MAYOTTE
ZA 710 SOUTH AFRICA
ZM 894 ZAMBIA
ZW 716 ZIMBABWE
`;

interface Country { numeric: string; name: string }

const byAlpha2 = new Map<string, Country>(TABLE.trim().split('\n').map((line) => [line.slice(0, 2), { numeric: line.slice(3, 6), name: line.slice(7) }]));

/** Whether `code` is an assigned ISO 3166-1 alpha-2 code, in capitals ('DE'; not 'EU', 'UK', 'ZZ' or 'de'). */
export function isCountryCode(code: string): boolean {
  return byAlpha2.has(code);
}

/** Every assigned alpha-2 code. */
export function countryCodes(): string[] {
  return [...byAlpha2.keys()];
}

/** The ISO 3166-1 numeric code of an alpha-2 code ('US' → '840'); '999' when unknown. */
export function countryNumeric(alpha2: string): string {
  return byAlpha2.get(alpha2.toUpperCase())?.numeric ?? '999';
}

/** The English short name in capitals ('DE' → 'GERMANY'); the code itself when unknown. */
export function countryName(alpha2: string): string {
  return byAlpha2.get(alpha2.toUpperCase())?.name ?? alpha2.toUpperCase();
}

/**
 * Where the post writes a separator inside a postal code of fixed length: its compact form (capitals,
 * no spaces or hyphens), the place, and the separator. `1000005` in Japan is `100-0005`.
 */
const SEPARATED: Record<string, { compact: RegExp; at: number; separator: ' ' | '-' }> = {
  BM: { compact: /^[A-Z]{2}(?:\d{2}|[A-Z]{2})$/, at: 2, separator: ' ' },
  BR: { compact: /^\d{8}$/, at: 5, separator: '-' },
  CZ: { compact: /^\d{5}$/, at: 3, separator: ' ' },
  GR: { compact: /^\d{5}$/, at: 3, separator: ' ' },
  IE: { compact: /^[A-Z0-9]{7}$/, at: 3, separator: ' ' },
  JP: { compact: /^\d{7}$/, at: 3, separator: '-' },
  MT: { compact: /^[A-Z]{3}\d{4}$/, at: 3, separator: ' ' },
  NL: { compact: /^\d{4}[A-Z]{2}$/, at: 4, separator: ' ' },
  PL: { compact: /^\d{5}$/, at: 2, separator: '-' },
  PT: { compact: /^\d{7}$/, at: 4, separator: '-' },
  SE: { compact: /^\d{5}$/, at: 3, separator: ' ' },
  SK: { compact: /^\d{5}$/, at: 3, separator: ' ' },
  US: { compact: /^\d{9}$/, at: 5, separator: '-' },
};

/**
 * A postal code in its country's canonical spelling: capitals, single spaces, the space the post
 * writes before the inward part (GB, CA: `SW1A 2AA`, `K1A 0B1`), and the separator of the countries
 * above, whether it was sent or left out (`1012js` is `1012 JS`, `1000005` is `100-0005`, `01310100`
 * is `01310-100`), and Latvia's prefix (`1050` is `LV-1050`). Anything else is kept as sent, but for
 * capitals and spacing.
 */
export function canonicalPostal(country: string, code: string): string {
  const compact = code.trim().toUpperCase().replace(/\s+/g, '');
  if ((country === 'GB' || country === 'CA') && compact.length > 3) return `${compact.slice(0, -3)} ${compact.slice(-3)}`;
  // Latvia's post writes its codes with the country's prefix: `LV-1050`, also when sent as `1050`.
  if (country === 'LV' && /^(?:LV-?)?\d{4}$/.test(compact)) return `LV-${compact.slice(-4)}`;
  const separated = SEPARATED[country];
  const bare = compact.replace(/-/g, '');
  if (separated?.compact.test(bare)) return `${bare.slice(0, separated.at)}${separated.separator}${bare.slice(separated.at)}`;
  return code.trim().toUpperCase().replace(/\s+/g, ' ');
}
