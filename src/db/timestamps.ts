// timestamptz columns as Dates, as pg's own parser (postgres-date) makes them, but without its regular
// expressions for the one shape PostgreSQL sends under its default DateStyle (ISO): every user row, session
// and identity a request reads has several, and the library's parse was a visible share of GET /user
// (bench/README.md, thirteenth check). Any other text (another DateStyle, a year of five digits, BC,
// infinity) goes to the library, so the instants are the library's in every case
// (test/timestamps.test.ts compares the two on PostgreSQL's own output in several time zones).
// The Dates of that shape also keep the microseconds a Date cannot hold, and write themselves in JSON as
// the original writes its times (docs/users-and-audit.md#user-json).
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
 * A time read from PostgreSQL: a Date (milliseconds, as every caller compares and computes with it) that
 * also holds the microseconds PostgreSQL keeps, so that JSON carries the stored time whole.
 */
export class DbTimestamp extends Date {
  constructor(
    milliseconds: number,
    /** the microseconds beyond the Date's last millisecond, 0–999 */
    readonly microseconds: number,
  ) {
    super(milliseconds);
  }

  /** The time `microseconds` after 1970 (a whole number), split into the Date's milliseconds and the rest. */
  static fromMicroseconds(microseconds: number): DbTimestamp {
    const milliseconds = Math.floor(microseconds / 1000);
    return new DbTimestamp(milliseconds, microseconds - milliseconds * 1000);
  }

  /** JSON.stringify's text of it: rfc3339Nano, as the original's JSON. */
  override toJSON(): string {
    return rfc3339Nano(this);
  }
}

/**
 * A value as a query parameter: a DbTimestamp as its text with all six digits, since pg writes any Date
 * with its milliseconds alone (so a time read and written back, or one set to the microsecond, would lose
 * the rest); anything else as it is.
 */
export const timestampParam = (value: unknown): unknown => (value instanceof DbTimestamp ? rfc3339Nano(value) : value);

/**
 * A time as the original's JSON writes one (Go's RFC3339Nano, in UTC): the fraction of a second with its
 * trailing zeros dropped, and without the dot when nothing is left (`2026-11-25T10:00:00.12345Z`,
 * `2026-11-25T10:00:00Z`). A DbTimestamp gives all six digits PostgreSQL stores, any other Date its three.
 * Built from the time's own numbers: every user, identity and session JSON writes several, and going
 * through toISOString and cutting it up was the largest share of GET /user's own JavaScript
 * (bench/README.md, fourteenth check).
 */
export function rfc3339Nano(date: Date): string {
  const time = date.getTime();
  // Years outside 1970–9999 (never written by the service) and invalid Dates: toISOString's own forms.
  if (!(time >= 0 && time < YEAR_10000)) return rfc3339NanoFromIso(date);
  const day = Math.floor(time / DAY);
  let rest = time - day * DAY;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / 60_000);
  rest -= minute * 60_000;
  const second = Math.floor(rest / 1000);
  const whole = `${civilDate(day)}T${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}`;
  let fraction = (rest - second * 1000) * 1000 + (date instanceof DbTimestamp ? date.microseconds : 0);
  if (fraction === 0) return `${whole}Z`;
  let places = 6;
  while (fraction % 10 === 0) {
    fraction /= 10;
    places--;
  }
  return `${whole}.${String(fraction).padStart(places, '0')}Z`;
}

const DAY = 86_400_000;
const YEAR_10000 = Date.UTC(10000, 0, 1);
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));

/** `YYYY-MM-DD` of a day counted from 1970-01-01, by the proleptic Gregorian calendar (days since 0000-03-01, in eras of 400 years). */
function civilDate(day: number): string {
  const shifted = day + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const dayOfMonth = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${TWO_DIGITS[month]}-${TWO_DIGITS[dayOfMonth]}`;
}

/** The same text cut out of toISOString, for the years the numbers above do not cover. */
function rfc3339NanoFromIso(date: Date): string {
  const iso = date.toISOString();
  if (iso.length !== 24) return iso;
  const micro = date instanceof DbTimestamp ? date.microseconds : 0;
  const fraction = micro === 0 ? iso.slice(20, 23) : iso.slice(20, 23) + String(micro).padStart(3, '0');
  let end = fraction.length;
  while (end > 0 && fraction.charCodeAt(end - 1) === ZERO) end--;
  return end === 0 ? `${iso.slice(0, 19)}Z` : `${iso.slice(0, 19)}.${fraction.slice(0, end)}Z`;
}

/**
 * `YYYY-MM-DD HH:MM:SS[.f{1,6}]±HH[:MM[:SS]]`, the text of a timestamptz under DateStyle ISO, as a
 * DbTimestamp; null when the text has another shape.
 */
function parseIsoShape(text: string): DbTimestamp | null {
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
  // The fraction's first three digits make the Date's milliseconds (truncated, as Date.UTC truncates the
  // library's 1000 × fraction), the next three its microseconds; PostgreSQL stores no more.
  let microseconds = 0;
  if (text.charCodeAt(at) === DOT) {
    let scale = 100_000;
    for (at++; at < length; at++, scale /= 10) {
      const digit = text.charCodeAt(at) - ZERO;
      if (digit < 0 || digit > 9) break;
      if (scale >= 1) microseconds += digit * scale;
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
  const milliseconds = Math.floor(microseconds / 1000);
  return new DbTimestamp(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds) - offset, microseconds - milliseconds * 1000);
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
