// Text in double quotes as Go's %q verb (strconv.Quote) writes it. The original quotes user input this way
// in several messages ("Unsupported logout scope %q", "Email address %q is invalid"), and clients and logs
// that match on those messages see the same text here, escapes included.

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;
const NAMED: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

export function goQuoted(text: string): string {
  let out = '"';
  for (const ch of text) {
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else out += NAMED[ch] ?? escaped(ch.codePointAt(0)!);
  }
  return `${out}"`;
}

function escaped(cp: number): string {
  if (cp < 0x80) return `\\x${hex(cp, 2)}`;
  return cp < 0x10000 ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
