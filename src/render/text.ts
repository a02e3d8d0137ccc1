// Making arbitrary user text printable: no control characters, nothing the font lacks, never wider
// than its place on the label.
import { hasGlyph, textWidth } from './fonts.ts';

const DROPPED = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Emoji_Component}]/u;

/**
 * One printable line: NFC, control characters (C0, C1, line/paragraph separators) removed,
 * whitespace collapsed; emoji the font lacks are dropped, any other missing character becomes '?'.
 */
export function cleanText(input: unknown): string {
  if (input === undefined || input === null) return '';
  const s = String(input)
    .normalize('NFC')
    .replace(/[\t\n\v\f\r\u2028\u2029]+/g, ' ')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  let out = '';
  for (const ch of s) {
    const fate = printed(ch);
    if (fate === 'kept') out += ch;
    else if (fate === 'replaced') out += '?';
  }
  return out.replace(/\?{2,}/g, '?').replace(/\s+/g, ' ').trim();
}

/** What printing does with one character (after NFC): draws it, drops it, or prints '?' instead. */
function printed(ch: string): 'kept' | 'dropped' | 'replaced' {
  const cp = ch.codePointAt(0)!;
  if (cp === 0x20) return 'kept';
  // Invisible format characters (joiners, variation selectors, bidi controls) shape nothing we print.
  if (/\p{Cf}|[\ufe00-\ufe0f]/u.test(ch)) return 'dropped';
  if (hasGlyph(cp)) return 'kept';
  // Emoji the font lacks go without a trace. So does a combining mark the font lacks, unless it belongs
  // to a script with no face at all (Thai, Devanagari), whose letters are replaced anyway.
  if (DROPPED.test(ch)) return 'dropped';
  if (/\p{Mn}/u.test(ch)) return /\p{Script=Inherited}/u.test(ch) ? 'dropped' : 'replaced';
  return 'replaced';
}

/**
 * The distinct characters of `text` that no bundled face has, which a document would print as '?'
 * (scripts such as Thai or Devanagari): a request that would print them is refused instead.
 */
export function unprintable(text: string): string[] {
  if (/^[\x20-\x7e]*$/.test(text)) return [];
  const missing = new Set<string>();
  for (const ch of text.normalize('NFC')) if (!/[\u0000-\u001f\u007f-\u009f]/.test(ch) && printed(ch) === 'replaced') missing.add(ch);
  return [...missing];
}

/**
 * Why `text` would not print as it was given, in words for the field that holds it, or undefined when
 * it prints: characters no bundled face has (a document would print '?'), or nothing left to print at
 * all (only emoji or invisible characters, which documents leave out).
 */
export function printProblem(text: string): string | undefined {
  // Printable ASCII, most text a shipment holds, is in every face.
  if (/^[\x20-\x7e]*$/.test(text)) return undefined;
  const missing = unprintable(text);
  if (missing.length) {
    const shown = missing.slice(0, 5).map((ch) => `${ch} (U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`);
    const more = missing.length > 5 ? ` and ${missing.length - 5} more` : '';
    return `has characters the labels cannot print: ${shown.join(', ')}${more}; write it in Latin script (as international mail asks anyway)`;
  }
  if (text.trim() !== '' && cleanText(text) === '') return 'would print as nothing: labels and documents leave out emoji and invisible characters, and it holds nothing else; write it in letters or digits';
  return undefined;
}

/**
 * Every string under `value` that would not print as given (printProblem), as field paths under
 * `field` (`to.name`, `customs.items[0].description`) with why: what a shipment or an address to
 * check is told, for each string it holds.
 */
export function printProblemsIn(value: unknown, field: string): { field: string; message: string }[] {
  if (typeof value === 'string') {
    const message = printProblem(value);
    return message ? [{ field, message }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => printProblemsIn(item, `${field}[${i}]`));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, item]) => printProblemsIn(item, field ? `${field}.${key}` : key));
  return [];
}

const GREEK = /\p{Script=Greek}/u;

/**
 * `text` in capitals as the post writes them: Greek without its accents, as Greek is written in
 * capitals (`Αθήνα` is `ΑΘΗΝΑ`; the dialytika stays, `Καΐρου` is `ΚΑΪΡΟΥ`), by ICU's Greek rules;
 * any other script as `toUpperCase` has it. Only text with a Greek letter takes ICU's way, which costs
 * ten times as much (docs/decisions.md).
 */
export function postalCapitals(text: string): string {
  return GREEK.test(text) ? text.toLocaleUpperCase('el') : text.toUpperCase();
}

/** Plain ASCII for barcode payloads: diacritics removed, anything else becomes '?'. */
export function asciiText(input: unknown): string {
  return cleanText(input)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/\?{2,}/g, '?');
}

export interface FittedText {
  text: string;
  size: number;
}

/**
 * Fits one line into `maxWidth` points: first shrinks the size down to `minSize`, then cuts the text
 * and ends it with an ellipsis. Never returns something wider than `maxWidth`.
 */
export function fitText(text: string, maxWidth: number, size: number, bold = false, minSize = size * 0.75): FittedText {
  if (!text || maxWidth <= 0) return { text: '', size };
  // No glyph of DejaVu Sans is narrower than 0.25 em, so longer prefixes can never fit.
  const chars = Array.from(text);
  const cap = Math.ceil(maxWidth / (0.25 * minSize)) + 1;
  if (chars.length > cap) text = chars.slice(0, cap).join('');
  const w = textWidth(text, size, bold);
  if (w <= maxWidth) return { text, size };
  const shrunk = Math.floor(size * (maxWidth / w) * 10) / 10;
  if (shrunk >= minSize && textWidth(text, shrunk, bold) <= maxWidth) return { text, size: shrunk };
  // Cut at the longest prefix that fits with the ellipsis (binary search over code points).
  const cps = Array.from(text);
  let lo = 0;
  let hi = cps.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (textWidth(`${cps.slice(0, mid).join('').trimEnd()}…`, minSize, bold) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  const cut = cps.slice(0, lo).join('').trimEnd();
  return { text: cut ? `${cut}…` : '', size: minSize };
}

/**
 * One text on at most `maxLines` lines of `maxWidth` points, broken between words, and inside a word
 * wider than a line; only what the last line cannot hold is cut, as `fitText` cuts. Nothing is wider
 * than `maxWidth`.
 */
export function wrapText(text: string, maxWidth: number, size: number, maxLines: number, bold = false): string[] {
  const lines: string[] = [];
  let rest = text.trim();
  while (rest && lines.length < maxLines - 1 && textWidth(rest, size, bold) > maxWidth) {
    const words = rest.split(' ');
    let n = 0;
    while (n < words.length && textWidth(words.slice(0, n + 1).join(' '), size, bold) <= maxWidth) n++;
    if (n > 0) {
      lines.push(words.slice(0, n).join(' '));
      rest = words.slice(n).join(' ');
    } else {
      // The first word alone is wider than a line: its longest prefix that fits, the rest on the next.
      const chars = Array.from(words[0]!);
      let fit = 1;
      while (fit < chars.length && textWidth(chars.slice(0, fit + 1).join(''), size, bold) <= maxWidth) fit++;
      lines.push(chars.slice(0, fit).join(''));
      rest = [chars.slice(fit).join(''), ...words.slice(1)].join(' ');
    }
  }
  if (rest) lines.push(fitText(rest, maxWidth, size, bold, size).text);
  return lines;
}
