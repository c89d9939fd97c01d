// A query string (or an application/x-www-form-urlencoded body) read as the original's Go query parser
// reads it (docs/api.md#query-strings). Pairs are split on '&' only; a pair holding a ';' (no longer a
// separator there) or a '%' not followed by two hex digits, in its name or its value, is left out, and
// the others are kept. The original's handlers read queries through r.URL.Query() and FormValue, which
// ignore the parser's error, so such a pair is as if it had not been sent: `POST /logout?scope=local;x`
// is a logout without a scope (global). URLSearchParams would keep it, and also drops a leading '?',
// which Go reads as part of the first name.

/** What the reading found: the pairs kept, and whether any was left out (the parser's error). */
export interface GoQuery {
  values: URLSearchParams;
  malformed: boolean;
}

const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/** A pair as sent, still escaped: its name and value. */
export type RawPair = readonly [name: string, value: string];

/**
 * The pairs Go's parser keeps, still escaped, in order, and whether it left any out: the one splitting rule
 * behind goParseQuery and the redirect builder's url.Values reading (go-url.ts).
 */
export function goQuerySplit(raw: string): { pairs: RawPair[]; malformed: boolean } {
  const pairs: RawPair[] = [];
  let malformed = false;
  for (const pair of raw.split('&')) {
    if (pair.includes(';')) {
      malformed = true;
      continue;
    }
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = equals < 0 ? pair : pair.slice(0, equals);
    const value = equals < 0 ? '' : pair.slice(equals + 1);
    if (BAD_ESCAPE.test(name) || BAD_ESCAPE.test(value)) {
      malformed = true;
      continue;
    }
    pairs.push([name, value]);
  }
  return { pairs, malformed };
}

export function goParseQuery(raw: string): GoQuery {
  const { pairs, malformed } = goQuerySplit(raw);
  const values = new URLSearchParams();
  for (const [name, value] of pairs) values.append(unescape(name), unescape(value));
  return { values, malformed };
}

/** The pairs kept by goParseQuery. */
export const goQueryValues = (raw: string): URLSearchParams => goParseQuery(raw).values;

/**
 * One side of a well-formed pair: '+' a space, each %XX its byte, the bytes read as UTF-8 with U+FFFD for
 * what is not (as URLSearchParams decodes; Go keeps such bytes, which a JavaScript string cannot hold).
 * Node's querystring.unescape is not used: on a bad UTF-8 escape it falls back to a decoder that reads
 * characters, not bytes, and garbles a non-ASCII character before it ('a😀%F0%9F' gives 'a=\0…').
 */
function unescape(side: string): string {
  const spaced = side.replace(/\+/g, ' ');
  return spaced.includes('%') ? unescapedBytes(spaced).toString('utf8') : spaced;
}

/** One side of a well-formed pair as the bytes Go's string holds: '+' a space, each %XX its byte. */
function unescapedBytes(side: string): Buffer {
  const bytes = Buffer.from(side.replace(/\+/g, ' '), 'utf8');
  const out = Buffer.alloc(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25) {
      out[n++] = parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
      i += 2;
    } else out[n++] = bytes[i];
  }
  return out.subarray(0, n);
}

/**
 * The first value of `name` as the original's handlers read it (`r.URL.Query().Get`), as bytes: a Go string
 * keeps an escaped byte that is no UTF-8 character, which an error message then quotes (an empty Buffer
 * when none). A pair the reading leaves out is not seen.
 */
export function goQueryValueBytes(raw: string, name: string): Buffer {
  const pair = goQuerySplit(raw).pairs.find(([n]) => unescape(n) === name);
  return pair ? unescapedBytes(pair[1]) : Buffer.alloc(0);
}
