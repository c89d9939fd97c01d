// timestamptz columns as Dates, as pg's own parser (postgres-date) makes them, but without its regular
// expressions for the one shape PostgreSQL sends under its default DateStyle (ISO): every user row, session
// and identity a request reads has several, and the library's parse was a visible share of GET /user
// (bench/README.md, thirteenth check). Any other text (another DateStyle, a year of five digits, BC,
// infinity) goes to the library, so the results are the library's in every case
// (test/timestamps.test.ts compares the two on PostgreSQL's own output in several time zones).
import pg from 'pg';

const TIMESTAMPTZ: number = pg.types.builtins.TIMESTAMPTZ;
const defaultParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown;
const parseWithLibrary = defaultParser(TIMESTAMPTZ, 'text') as (text: string) => Date;

const ZERO = 48;
const PLUS = 43;
const MINUS = 45;
const COLON = 58;
const DOT = 46;
const SPACE = 32;

/** The value of `count` decimal digits at `at`, or -1 if any of them is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * `YYYY-MM-DD HH:MM:SS[.f{1,6}]±HH[:MM[:SS]]`, the text of a timestamptz under DateStyle ISO, as a Date;
 * null when the text has another shape.
 */
function parseIsoShape(text: string): Date | null {
  const length = text.length;
  if (length < 22 || text.charCodeAt(4) !== MINUS || text.charCodeAt(7) !== MINUS || text.charCodeAt(10) !== SPACE) return null;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  // The library's 0–99 year fix-up and BC years are left to it: a year below 1000 is not this shape.
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  let at = 19;
  let milliseconds = 0;
  if (text.charCodeAt(at) === DOT) {
    // Milliseconds truncated, as Date.UTC truncates the library's 1000 × fraction.
    let scale = 100;
    for (at++; at < length; at++, scale /= 10) {
      const digit = text.charCodeAt(at) - ZERO;
      if (digit < 0 || digit > 9) break;
      if (scale >= 1) milliseconds += digit * scale;
    }
  }
  const sign = text.charCodeAt(at);
  if (sign !== PLUS && sign !== MINUS) return null;
  // ±HH, then optionally :MM and :SS, and nothing after.
  const rest = length - at - 1;
  if (rest !== 2 && rest !== 5 && rest !== 8) return null;
  const offsetHours = digits(text, at + 1, 2);
  const offsetMinutes = rest >= 5 && text.charCodeAt(at + 3) === COLON ? digits(text, at + 4, 2) : rest >= 5 ? -1 : 0;
  const offsetSeconds = rest === 8 && text.charCodeAt(at + 6) === COLON ? digits(text, at + 7, 2) : rest === 8 ? -1 : 0;
  if (offsetHours < 0 || offsetMinutes < 0 || offsetSeconds < 0) return null;
  const offset = (sign === MINUS ? -1 : 1) * (offsetHours * 3600 + offsetMinutes * 60 + offsetSeconds) * 1000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds) - offset);
}

/** A timestamptz's text as pg's default parser gives it, faster for PostgreSQL's usual output. */
export function parseTimestamptz(text: string): Date {
  return parseIsoShape(text) ?? parseWithLibrary(text);
}

/**
 * The pool's type parsers (pg's `types` option): pg's defaults, with parseTimestamptz for timestamptz.
 * Per pool rather than pg's global registry, so nothing else in the process is changed.
 */
export const POOL_TYPES: pg.CustomTypesConfig = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ && format !== 'binary' ? parseTimestamptz : defaultParser(oid, format),
};
