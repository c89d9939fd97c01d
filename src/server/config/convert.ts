// A setting's text, as the environment or .env gives it, turned into its typed value; an Error names what
// is wrong with it (config/load.ts prefixes the variable it came from).
import type { Setting } from './settings.js';
import type { SendLimit } from './types.js';
import { parseSeconds } from './duration.js';
import { keptVerbatim } from './verbatim.js';
import { KeySetError, parseKeySet } from '../auth/keys.js';

export function convert(setting: Setting, text: string): unknown {
  const raw = text.trim();
  switch (setting.kind) {
    case 'string':
      return keptVerbatim(setting.name) ? text : raw;
    case 'logLevel': {
      const level = raw.toLowerCase();
      return level === 'warning' ? 'warn' : level;
    }
    case 'bool':
      if (/^(true|1|yes|on|t)$/i.test(raw)) return true;
      if (/^(false|0|no|off|f)$/i.test(raw)) return false;
      return new Error(`"${raw}" is not a boolean (use true or false)`);
    case 'int': {
      const value = parseGoInt(raw);
      if (value === null) return new Error(`"${raw}" is not a whole number`);
      return Number.isFinite(value) ? value : outOfRange(raw);
    }
    case 'number': {
      if (!FLOAT.test(raw)) return new Error(`"${raw}" is not a number`);
      const value = Number(raw);
      return Number.isFinite(value) ? value : outOfRange(raw);
    }
    case 'duration': {
      const seconds = parseSeconds(raw);
      return seconds === null ? new Error(`"${raw}" is not a duration (seconds like 900, or 15m, 1h30m)`) : seconds;
    }
    case 'list':
      return raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    case 'pipeList':
      return raw
        .split('|')
        .map((x) => x.trim())
        .filter(Boolean);
    case 'sendLimit':
      return parseSendLimit(raw);
    case 'map':
      return parseMap(raw);
    case 'pairs':
      return parsePairs(raw);
    case 'jwkSet':
      return parseJwkSet(raw);
  }
}

/** Go's ParseFloat forms a number setting or a rate is written in: 1800, 1800.0, 13.5, .5, 1e3, -1, +30 */
const FLOAT = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/**
 * The original's ParseInt and ParseFloat refuse a number past an int64 or a float64 (`1e400`), which stops its
 * start; read here as an endless value, it would put a token's expiry or a limit beyond any clock.
 */
function outOfRange(raw: string): Error {
  return new Error(`"${raw}" is out of range (a 64-bit number, as the original reads it)`);
}

/** The most events a `N/duration` rate takes: the original parses N as a 52-bit unsigned number, to fit a float64. */
const MAX_RATE_EVENTS = 2 ** 52 - 1;

/**
 * As the original reads a rate: any number is that many per hour, of which its limiter counts the whole part
 * (1800.0, 13.5); `N/duration` needs a whole N, and a period of 0 or less is an hour there too.
 */
function parseSendLimit(raw: string): SendLimit | Error {
  if (FLOAT.test(raw)) {
    const perHour = Number(raw);
    return Number.isFinite(perHour) ? { max: Math.max(0, Math.floor(perHour)), periodSeconds: 3600, bucket: false } : outOfRange(raw);
  }
  const parts = raw.split('/');
  const [count, period] = parts;
  if (parts.length !== 2 || !/^\d+$/.test(count)) return new Error(`"${raw}" is not a limit (N per hour, or N/duration like 10/1m)`);
  if (Number(count) > MAX_RATE_EVENTS) return new Error(`"${raw}" counts more than ${MAX_RATE_EVENTS} events`);
  const seconds = parseSeconds(period);
  if (seconds === null) return new Error(`"${raw}" has an invalid period "${period}"`);
  return { max: Number(count), periodSeconds: seconds > 0 ? seconds : 3600, bucket: true };
}

function parseJwkSet(raw: string): unknown {
  try {
    return parseKeySet(raw);
  } catch (err) {
    if (!(err instanceof KeySetError)) throw err;
    const shared = sharedKids(raw);
    if (shared.length === 0) return err;
    // Of two keys with one kid only the later is kept, as the original keeps it, so the set that was checked
    // is not the list as written (a signing key given first is gone): name the kid, or the count misleads.
    return new KeySetError(
      `${err.message}; ${shared.map((kid) => `kid "${kid}"`).join(', ')} ${shared.length > 1 ? 'are each' : 'is'} used by more than one key, ` +
        'of which only the last is kept, as in the original: give each key its own kid',
    );
  }
}

/** The kids given to more than one key of a JWT_KEYS list; none when it is no JSON list. */
function sharedKids(raw: string): string[] {
  let keys: unknown;
  try {
    keys = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(keys)) return [];
  const kids = keys.map((key: unknown) => (key && typeof key === 'object' ? (key as { kid?: unknown }).kid : undefined));
  return [...new Set(kids.filter((kid, i): kid is string => typeof kid === 'string' && kid !== '' && kids.indexOf(kid) !== i))];
}

/**
 * `key:value` pairs separated by ','. As the original's loader, a pair is exactly two halves: `a:b:c` stops the
 * start rather than read as `a:b` (a test number's code cut short), and so does a stray comma.
 */
function parseMap(raw: string): Record<string, string> | Error {
  const out: Record<string, string> = {};
  if (raw === '') return out;
  for (const pair of raw.split(',').map((x) => x.trim())) {
    if (pair === '') return new Error(`"${raw}" has an empty pair (a stray comma)`);
    const halves = pair.split(':').map((x) => x.trim());
    const [key, value] = halves;
    if (halves.length !== 2 || !key || !value) return new Error(`"${pair}" is not a key:value pair`);
    // SMS_TEST_OTP's phone numbers as the original formats them: no leading '+', no spaces (the other map,
    // of key ids, holds neither).
    out[key.replace(/^\+/, '').replaceAll(' ', '')] = value;
  }
  return out;
}

/**
 * `key=value` pairs separated by ','. '=' rather than ':' because the keys may hold a colon themselves
 * (custom providers are `custom:<id>`). As the original, every pair must have both halves: a stray comma
 * is a mistake to report, not a blank to skip, since a misread map silently changes who links with whom.
 */
function parsePairs(raw: string): Record<string, string> | Error {
  const out: Record<string, string> = {};
  if (raw === '') return out;
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') return new Error(`"${raw}" has an empty pair (a stray comma)`);
    const at = pair.indexOf('=');
    if (at < 0) return new Error(`"${pair.trim()}" is not a key=value pair`);
    const key = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    if (!key || !value) return new Error(`"${pair.trim()}" is not a key=value pair: both must be non-empty`);
    out[key] = value;
  }
  return out;
}

/**
 * Sets separated by ':'; a set ending in '\' takes a literal ':' and the next part (docs/passwords.md#strength-rules).
 * The original's rules to the letter: a joined set is not looked at again (`a\:b\:c` is `a:b\` and `c`), and
 * the last part keeps a trailing '\', as nothing follows it to join.
 */
export function splitCharacterSets(raw: string): string[] {
  const parts = raw.split(':');
  for (let i = 0; i < parts.length - 1; i++) {
    if (!parts[i].endsWith('\\')) continue;
    parts[i] = `${parts[i].slice(0, -1)}:${parts[i + 1]}`;
    parts[i + 1] = '';
  }
  return parts.filter(Boolean);
}

/** The prefix BigInt reads a whole number's digits in, by radix: exact where a Number rounds past 2^53. */
const BIGINT_PREFIX: Record<number, string> = { 16: '0x', 8: '0o', 2: '0b', 10: '' };
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A whole number as the original reads it (Go's strconv.ParseInt with base 0): a sign, `0x`, `0o` or `0b`
 * prefixes, a leading 0 for octal (`0600` is 384 there too), and `_` between digits. Null when it is none;
 * ±Infinity past an int64, which ParseInt refuses as out of range.
 */
export function parseGoInt(text: string): number | null {
  const match =
    /^([+-]?)(0[xX]_?[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[oO]_?[0-7]+(?:_[0-7]+)*|0[bB]_?[01]+(?:_[01]+)*|0_?[0-7]+(?:_[0-7]+)*|0|[1-9][0-9]*(?:_[0-9]+)*)$/.exec(
      text,
    );
  if (!match) return null;
  const body = match[2].replaceAll('_', '');
  const radix = /^0[xX]/.test(body)
    ? 16
    : /^0[oO]/.test(body)
      ? 8
      : /^0[bB]/.test(body)
        ? 2
        : body.length > 1 && body.startsWith('0')
          ? 8
          : 10;
  const digits = radix === 10 || (radix === 8 && !/^0[oO]/.test(body)) ? body : body.slice(2);
  const negative = match[1] === '-';
  const exact = BigInt(BIGINT_PREFIX[radix] + digits);
  if (exact > (negative ? INT64_MAX + 1n : INT64_MAX)) return negative ? -Infinity : Infinity;
  return Number(negative ? -exact : exact);
}
