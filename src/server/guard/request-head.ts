// Reads one HTTP/1.x request head as the guard receives it, decides whether the uWS build behind it can
// parse it, and says how long the body is. Everything uWS 20.30 would drop without an answer is refused
// here with a reason (docs/http-guard.md#what-the-guard-refuses); the rest is handed on, rewritten only
// where uWS needs it.

/** uWS 20.30 answers a head of 48 header fields and drops one of 49 (probed: docs/http-guard.md). */
export const MAX_HEADER_FIELDS = 48;
/** Heads up to this size are collected whole and handed to uWS in one write (cookies of 16 KiB and more). */
export const MAX_HEAD_BYTES = 32 * 1024;

/** Methods the service routes; any other method is 405 here (uWS closes the connection on most of them). */
const ROUTED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export type Refusal =
  { kind: 'malformed'; reason: string } | { kind: 'method' } | { kind: 'version' } | { kind: 'too_large'; reason: string };

export type BodyFraming = { kind: 'length'; bytes: number } | { kind: 'chunked' };

export interface AcceptedHead {
  method: string;
  /** the bytes to hand on: the original head, or a rewrite without the fields uWS cannot parse */
  head: Buffer;
  body: BodyFraming;
  /** the connection ends after this request's answer (`Connection: close`, or HTTP/1.0 without keep-alive) */
  closes: boolean;
}

export type HeadResult =
  { kind: 'incomplete' } | { kind: 'refused'; refusal: Refusal } | { kind: 'accepted'; end: number; value: AcceptedHead };

const HEAD_END = Buffer.from('\r\n\r\n');
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([^ ]+) HTTP\/(\d)\.(\d)$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The header names uWS 20.30 parses; other valid names are dropped, as nginx drops them by default. */
const UWS_NAME = /^[0-9A-Za-z-]+$/;
/**
 * The one such name the service reads: the original takes a redirect target from a `redirect_to` header.
 * It is handed on as `redirect-to`, which uWS parses (http/redirect-target.ts reads it there).
 */
const REDIRECT_TO = /^redirect_to$/i;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const DIGITS = /^\d{1,15}$/;

/**
 * Looks for a whole head in `buf` from `start` (empty lines before a request are skipped, RFC 9112 2.2).
 * `end` is where the body (or the next request) begins.
 */
export function readRequestHead(buf: Buffer, start: number): HeadResult {
  let from = start;
  while (buf.length >= from + 2 && buf[from] === 0x0d && buf[from + 1] === 0x0a) from += 2;
  const at = buf.indexOf(HEAD_END, from);
  if (at < 0) {
    if (buf.length - from > MAX_HEAD_BYTES)
      return refused({ kind: 'too_large', reason: `the request head is over ${MAX_HEAD_BYTES} bytes` });
    return earlyRefusal(buf, from);
  }
  const end = at + 4;
  if (end - from > MAX_HEAD_BYTES) return refused({ kind: 'too_large', reason: `the request head is over ${MAX_HEAD_BYTES} bytes` });
  const text = buf.toString('latin1', from, at);
  const lines = text.split('\r\n');
  const line = requestLine(lines[0]);
  if ('refusal' in line) return refused(line.refusal);
  const fields = headerFields(buf, from, at, lines);
  if ('refusal' in fields) return refused(fields.refusal);
  const count = fields.kept.length + fields.contentLength.length + fields.transferEncoding.length + (fields.host ? 0 : 1);
  if (count > MAX_HEADER_FIELDS)
    return refused({ kind: 'too_large', reason: `the request has ${count} header fields, over ${MAX_HEADER_FIELDS}` });
  if (!fields.host && line.version === '1.1') return refused({ kind: 'malformed', reason: 'an HTTP/1.1 request needs a Host header' });
  const body = bodyFraming(fields, line.version);
  if ('refusal' in body) return refused(body.refusal);
  const unchanged = fields.unparsableNames === 0 && line.target === line.rawTarget && line.version === '1.1' && !body.normalised;
  // Most requests send no Connection header: nothing to split then.
  const options = fields.connection.length === 0 ? NO_OPTIONS : fields.connection.flatMap((value) => value.split(',').map((o) => o.trim()));
  const closes = options.includes('close') || (line.version === '1.0' && !options.includes('keep-alive'));
  const head = unchanged ? buf.subarray(from, end) : rewrite(line, fields, body.framing, closes && !options.includes('close'));
  return { kind: 'accepted', end, value: { method: line.method, head, body: body.framing, closes } };
}

const NO_OPTIONS: readonly string[] = [];
const refused = (refusal: Refusal): HeadResult => ({ kind: 'refused', refusal });

/**
 * A request line that is already wrong need not wait for the rest of its head (or for the head timeout): one
 * ended by a bare LF (such a head never holds the CRLF CRLF that would end it), or a method that is already
 * no token (binary bytes, a TLS handshake sent to this plain-text port).
 */
function earlyRefusal(buf: Buffer, from: number): HeadResult {
  const eol = buf.indexOf(0x0a, from);
  if (eol < 0) return methodSoFar(buf, from);
  if (eol === from || buf[eol - 1] !== 0x0d) return refused({ kind: 'malformed', reason: 'lines must end with CRLF' });
  const line = requestLine(buf.toString('latin1', from, eol - 1));
  return 'refusal' in line ? refused(line.refusal) : { kind: 'incomplete' };
}

/** Refused when the bytes before the request line's first space are not all token characters. */
function methodSoFar(buf: Buffer, from: number): HeadResult {
  const space = buf.indexOf(0x20, from);
  const method = buf.toString('latin1', from, space < 0 ? buf.length : space);
  // Nothing yet, or the first half of an empty line's CRLF (allowed before a request) split across reads.
  if (space < 0 && (method === '' || method === '\r')) return { kind: 'incomplete' };
  return TOKEN.test(method)
    ? { kind: 'incomplete' }
    : refused({ kind: 'malformed', reason: 'the request line is not "METHOD target HTTP/1.1"' });
}

interface RequestLine {
  method: string;
  rawTarget: string;
  target: string;
  version: '1.0' | '1.1';
}

function requestLine(text: string): RequestLine | { refusal: Refusal } {
  if (text.includes('\n')) return { refusal: { kind: 'malformed', reason: 'lines must end with CRLF' } };
  const m = REQUEST_LINE.exec(text);
  if (!m) return { refusal: { kind: 'malformed', reason: 'the request line is not "METHOD target HTTP/1.1"' } };
  const [, method, rawTarget, major, minor] = m;
  if (major !== '1' || (minor !== '0' && minor !== '1')) return { refusal: { kind: 'version' } };
  if (!ROUTED_METHODS.has(method)) return { refusal: { kind: 'method' } };
  if (!VISIBLE_ASCII.test(rawTarget))
    return { refusal: { kind: 'malformed', reason: 'the request target holds characters that must be percent-encoded' } };
  const target = originForm(rawTarget);
  if (target === null)
    return { refusal: { kind: 'malformed', reason: 'the request target must be a path ("/...") or an absolute http(s) URL' } };
  return { method, rawTarget, target, version: minor === '1' ? '1.1' : '1.0' };
}

/** "/path?query" as it is; an absolute-form target (RFC 9112 3.2.2) becomes its path and query. */
function originForm(target: string): string | null {
  if (target.startsWith('/')) return target;
  if (!/^https?:\/\//i.test(target)) return null;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return null;
  }
}

interface Fields {
  kept: string[];
  /** header names uWS cannot parse: the head is rewritten without them */
  unparsableNames: number;
  host: boolean;
  connection: string[];
  contentLength: string[];
  transferEncoding: string[];
}

// Letters a framing header's name starts with (host, connection, content-length, transfer-encoding), lower case.
const H = 0x68;
const C = 0x63;
const T = 0x74;

/**
 * The head's bytes from `from` to `to` (its last CRLF excluded) may hold visible characters, spaces, tabs and
 * obs-text; CR and LF only together, ending a line; any other control character (NUL above all) is
 * refused, as Go's net/http refuses it. One pass over the bytes, as this runs for every request: two
 * regular expressions over the head's text (one with a lookbehind for a lone LF) took longer.
 */
function checkBytes(buf: Buffer, from: number, to: number): Refusal | null {
  let control = false;
  for (let i = from; i < to; i++) {
    const b = buf[i];
    if ((b > 0x1f && b !== 0x7f) || b === 0x09) continue;
    if (b === 0x0d && i + 1 < to && buf[i + 1] === 0x0a) {
      i++;
      continue;
    }
    // A lone CR or LF says more about the head than a stray control character, wherever each is.
    if (b === 0x0d || b === 0x0a) return { kind: 'malformed', reason: 'lines must end with CRLF' };
    control = true;
  }
  return control ? { kind: 'malformed', reason: 'a header value holds a control character' } : null;
}

function headerFields(buf: Buffer, from: number, to: number, lines: string[]): Fields | { refusal: Refusal } {
  const bad = checkBytes(buf, from, to);
  if (bad) return { refusal: bad };
  const fields: Fields = { kept: [], unparsableNames: 0, host: false, connection: [], contentLength: [], transferEncoding: [] };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const first = line.charCodeAt(0);
    if (first === 0x20 || first === 0x09) return { refusal: { kind: 'malformed', reason: 'folded header lines are not accepted' } };
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon);
    if (!UWS_NAME.test(name)) {
      if (!TOKEN.test(name)) return { refusal: { kind: 'malformed', reason: 'a header line has no valid field name' } };
      fields.unparsableNames++;
      if (REDIRECT_TO.test(name)) fields.kept.push('redirect-to' + line.slice(colon));
      continue;
    }
    const letter = first | 0x20;
    if (letter === H || letter === C || letter === T) {
      const lower = name.toLowerCase();
      if (lower === 'host') fields.host = true;
      else if (lower === 'connection')
        fields.connection.push(
          line
            .slice(colon + 1)
            .trim()
            .toLowerCase(),
        );
      else if (lower === 'content-length' || lower === 'transfer-encoding') {
        // Framing headers are written back once, normalised (rewrite below), when they were repeated.
        (lower === 'content-length' ? fields.contentLength : fields.transferEncoding).push(line.slice(colon + 1).trim());
        continue;
      }
    }
    fields.kept.push(line);
  }
  return fields;
}

type Framing = { framing: BodyFraming; normalised: boolean };

function bodyFraming(fields: Fields, version: string): Framing | { refusal: Refusal } {
  if (fields.transferEncoding.length > 0) {
    // Both framings at once is how requests are smuggled past proxies (RFC 9112 6.1): refused, not guessed.
    if (fields.contentLength.length > 0) return { refusal: { kind: 'malformed', reason: 'Content-Length and Transfer-Encoding together' } };
    const codings = fields.transferEncoding
      .join(',')
      .split(',')
      .map((c) => c.trim().toLowerCase());
    if (version !== '1.1' || codings.length !== 1 || codings[0] !== 'chunked')
      return { refusal: { kind: 'malformed', reason: 'the only Transfer-Encoding accepted is "chunked" (HTTP/1.1)' } };
    return { framing: { kind: 'chunked' }, normalised: false };
  }
  if (fields.contentLength.length === 0) return { framing: { kind: 'length', bytes: 0 }, normalised: false };
  const values = new Set(
    fields.contentLength
      .join(',')
      .split(',')
      .map((v) => v.trim()),
  );
  const [only] = values;
  if (values.size !== 1 || !DIGITS.test(only))
    return { refusal: { kind: 'malformed', reason: 'Content-Length must be one decimal number' } };
  return {
    framing: { kind: 'length', bytes: Number(only) },
    normalised: fields.contentLength.length > 1 || fields.contentLength[0] !== only,
  };
}

function rewrite(line: RequestLine, fields: Fields, body: BodyFraming, addClose: boolean): Buffer {
  // uWS 20.30 answers no HTTP/1.0 request at all: it gets the HTTP/1.1 equivalent, which closes the
  // connection after the answer unless the client asked to keep it (RFC 9112 9.3). Answers carry a
  // Content-Length, which a 1.0 client reads as it would a 1.0 answer.
  const lines = [`${line.method} ${line.target} HTTP/1.1`, ...fields.kept];
  if (addClose) lines.push('Connection: close');
  if (body.kind === 'chunked') lines.push('Transfer-Encoding: chunked');
  else if (fields.contentLength.length > 0) lines.push(`Content-Length: ${body.bytes}`);
  // uWS 20.30 leaves a request without Host unanswered; HTTP/1.0 clients may omit it.
  if (!fields.host) lines.push('Host: localhost');
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}
