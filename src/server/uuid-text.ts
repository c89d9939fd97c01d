// A UUID in text, read as the original's UUID library (gofrs/uuid FromString) reads it: the canonical form,
// 32 bare hex digits, either of those in braces, or either behind "urn:uuid:", in any case of hex digit.
// The original reads its admin path ids, custom user ids and POST /sso's provider_id this way; what it stores
// and answers is the canonical lower-case form, so that is what a successful read gives. A failed read gives
// the library's error text (POST /sso quotes it; the wording is rebuilt so clients matching on it see the same).

import { goQuoted } from './go-quoted.js';

export type UuidRead = { uuid: string } | { error: string };

/** The canonical form alone, for the places that take only it. */
export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

const URN = 'urn:uuid:';

export function readUuid(text: string): UuidRead {
  const hex = decodeAny(Buffer.from(text, 'utf8'));
  if (typeof hex !== 'string') return hex;
  return { uuid: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` };
}

/** The canonical form of any accepted spelling, or null when the text (or a non-string) is no UUID. */
export function canonicalUuid(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  const read = readUuid(text);
  return 'uuid' in read ? read.uuid : null;
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

const lengthError = (b: Buffer) => ({ error: `uuid: incorrect UUID length ${b.length} in string ${goQuoted(b.toString('utf8'))}` });
const formatError = (b: Buffer) => ({ error: `uuid: incorrect UUID format in string ${goQuoted(b.toString('utf8'))}` });

/** A byte as Go's %#U prints it: U+0067 'g', the character left out when it is not printable. */
function codePoint(byte: number): string {
  const code = `U+${byte.toString(16).toUpperCase().padStart(4, '0')}`;
  const printable = (byte >= 0x20 && byte < 0x7f) || (byte > 0xa0 && byte !== 0xad);
  return printable ? `${code} '${String.fromCharCode(byte)}'` : code;
}
