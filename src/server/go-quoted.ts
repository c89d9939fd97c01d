// Text in double quotes as Go's %q verb (strconv.Quote) writes it. The original quotes user input this way
// in several messages ("Unsupported logout scope %q", "Email address %q is invalid"), and clients and logs
// that match on those messages see the same text here, escapes included.

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;
const NAMED: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

export function goQuoted(text: string): string {
  let out = '"';
  for (const ch of text) out += quotedChar(ch);
  return `${out}"`;
}

/**
 * Bytes in double quotes as %q writes a Go string, which may hold bytes that are no UTF-8: each such byte
 * as \xNN, one by one, as Go's decoder steps over it (a sequence cut short is one escape per byte, where a
 * UTF-8 decoder replacing errors would give one U+FFFD for it); the rest as goQuoted writes it.
 */
export function goQuotedBytes(bytes: Uint8Array): string {
  let out = '"';
  for (let i = 0; i < bytes.length;) {
    const ch = characterAt(bytes, i);
    out += ch === null ? `\\x${hex(bytes[i], 2)}` : quotedChar(ch);
    i += ch === null ? 1 : Buffer.byteLength(ch);
  }
  return `${out}"`;
}

function quotedChar(ch: string): string {
  if (ch === '"' || ch === '\\') return `\\${ch}`;
  if (PRINTABLE.test(ch)) return ch;
  return NAMED[ch] ?? escaped(ch.codePointAt(0)!);
}

// ignoreBOM: a U+FEFF is a character to quote (\ufeff), not a mark to drop.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The character whose UTF-8 encoding starts at `i` (overlong forms and surrogates refused, as Go's), or null. */
function characterAt(bytes: Uint8Array, i: number): string | null {
  const lead = bytes[i];
  const length =
    lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
  if (length === 0 || i + length > bytes.length) return null;
  try {
    return STRICT_UTF8.decode(bytes.subarray(i, i + length));
  } catch {
    return null;
  }
}

function escaped(cp: number): string {
  if (cp < 0x80) return `\\x${hex(cp, 2)}`;
  return cp < 0x10000 ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
