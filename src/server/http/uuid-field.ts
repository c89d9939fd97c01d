// A UUID body field read as the original reads it (POST /sso's provider_id, POST /factors/{id}/verify's
// challenge_id): its body is decoded straight into a UUID, which takes the canonical form, 32 bare hex digits,
// either of those in braces, or either behind "urn:uuid:". Any other string, the empty one included, fails
// the decoding of the whole body: 400 bad_json, worded by the UUID library (the wording is rebuilt here so
// that clients matching on it see the same text). The nil UUID means "none".

export type UuidFieldRead = { uuid: string | null } | { error: string };

const URN = 'urn:uuid:';

export function readUuidField(text: string): UuidFieldRead {
  const bytes = Buffer.from(text, 'utf8');
  const hex = decodeAny(bytes);
  if (typeof hex !== 'string') return hex;
  const canonical = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { uuid: /^0+$/.test(hex) ? null : canonical };
}

/** The 32 lower-case hex digits of one of the accepted forms, else the library's error. */
function decodeAny(b: Buffer): string | { error: string } {
  switch (b.length) {
    case 32:
      return hexOf(b);
    case 34:
    case 38:
      if (b[0] !== 0x7b || b[b.length - 1] !== 0x7d) return formatError(b);
      return decodePlain(b.subarray(1, b.length - 1));
    case 36:
      return decodeCanonical(b);
    case 41:
    case 45:
      if (b.subarray(0, URN.length).toString('latin1') !== URN) return formatError(b);
      return decodePlain(b.subarray(URN.length));
    default:
      return lengthError(b);
  }
}

function decodePlain(b: Buffer): string | { error: string } {
  if (b.length === 32) return hexOf(b);
  if (b.length === 36) return decodeCanonical(b);
  return lengthError(b);
}

function decodeCanonical(b: Buffer): string | { error: string } {
  if ([8, 13, 18, 23].some((i) => b[i] !== 0x2d)) return formatError(b);
  let digits = '';
  for (const [from, to] of [
    [0, 8],
    [9, 13],
    [14, 18],
    [19, 23],
    [24, 36],
  ]) {
    const part = hexOf(b.subarray(from, to));
    if (typeof part !== 'string') return part;
    digits += part;
  }
  return digits;
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

function hexOf(b: Buffer): string | { error: string } {
  const bad = b.findIndex((c) => !isHex(c));
  if (bad >= 0) return { error: `encoding/hex: invalid byte: ${codePoint(b[bad])}` };
  return b.toString('latin1').toLowerCase();
}

const lengthError = (b: Buffer) => ({ error: `uuid: incorrect UUID length ${b.length} in string ${quoted(b)}` });
const formatError = (b: Buffer) => ({ error: `uuid: incorrect UUID format in string ${quoted(b)}` });

/** A byte as Go's %#U prints it: U+0067 'g', the character left out when it is not printable. */
function codePoint(byte: number): string {
  const code = `U+${byte.toString(16).toUpperCase().padStart(4, '0')}`;
  const printable = (byte >= 0x20 && byte < 0x7f) || (byte > 0xa0 && byte !== 0xad);
  return printable ? `${code} '${String.fromCharCode(byte)}'` : code;
}

/** Text in double quotes with Go's escapes (%q): printable characters kept, others escaped. */
function quoted(b: Buffer): string {
  const named: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
  let out = '"';
  for (const ch of b.toString('utf8')) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (named[ch]) out += named[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0x80 && cp < 0xa0) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
