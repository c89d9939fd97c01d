// The dotenv syntax of the operator's files (.env, the -c file, the config directory's .env files), read
// by the rules of the original's parser so that a file it reads gives every value the same here
// (docs/settings.md#dotenv-syntax). The npm `dotenv` parser differs where it matters most: it cuts a value
// at any `#` (a JWT secret holding one signed with its first characters), keeps `\"` escapes, takes
// backticks as quotes, and drops a broken line without a word. No npm parser follows these rules, hence
// this one. The rules, in short:
//   - blank lines and lines starting with `#` are skipped; `export ` before a name is dropped;
//   - a name is ASCII letters, digits, `_` and `.`, followed by `=` or `:`; anything else stops the parse;
//   - an unquoted value runs to the end of its line, is trimmed, and a `#` starts a comment only after
//     a space or tab (the last such `#` of the line), so `abc#def` is a value;
//   - a value in single quotes is taken as written; in double quotes `\n` and `\r` are a line break and a
//     carriage return, and a backslash before any other character stands for that character;
//   - quotes may span lines; a quote that is never closed stops the parse; `\$` is `$` (nothing is expanded).

import { GO_SPACE } from '../go-trim-space.js';

/** A file that does not follow the syntax; the message says where, never the value (it may be a secret). */
export class DotenvSyntaxError extends Error {}

/** Spaces within a line, as the original counts them (a line break ends a value, so it is not one). */
const INLINE_SPACE = new Set(['\t', '\v', '\f', '\r', ' ', '\u0085', '\u00a0']);
const NAME_CHARACTER = /[A-Za-z0-9_.]/;

/** The variables of a dotenv text, later lines overriding earlier ones. Throws DotenvSyntaxError. */
export function parseDotenv(text: string): Record<string, string> {
  const src = text.replaceAll('\r\n', '\n');
  const vars: Record<string, string> = {};
  let at = nextStatement(src, 0);
  while (at < src.length) {
    const name = readName(src, at);
    const value = readValue(src, skipInlineSpace(src, name.end), name.key);
    vars[name.key] = value.value;
    at = nextStatement(src, value.end);
  }
  return vars;
}

/** Where the next name starts, past white space and comment lines; src.length when there is none. */
function nextStatement(src: string, from: number): number {
  let at = from;
  for (;;) {
    // Any white space, line breaks included, may stand between statements.
    while (at < src.length && GO_SPACE.test(src[at])) at++;
    if (at >= src.length || src[at] !== '#') return at;
    const lineEnd = src.indexOf('\n', at);
    if (lineEnd < 0) return src.length;
    at = lineEnd;
  }
}

function skipInlineSpace(src: string, from: number): number {
  let at = from;
  while (at < src.length && INLINE_SPACE.has(src[at])) at++;
  return at;
}

/**
 * The name starting at `from` and where its value starts (past the `=` or `:`). Spaces inside or around a
 * name are allowed and the trailing ones dropped. A last line with no separator is read as the value of
 * an empty name, which no setting reads: the original ignores such a line rather than refusing the file.
 */
function readName(src: string, from: number): { key: string; end: number } {
  let start = skipInlineSpace(src, from);
  if (src.startsWith('export', start) && INLINE_SPACE.has(src[start + 6] ?? '')) start = skipInlineSpace(src, start + 6);
  for (let at = start; at < src.length; at++) {
    const c = src[at];
    if (c === '=' || c === ':') return { key: src.slice(start, at).trimEnd(), end: at + 1 };
    if (INLINE_SPACE.has(c) || NAME_CHARACTER.test(c)) continue;
    const shown = c === '\n' ? 'a line break (no = after the name)' : JSON.stringify(c);
    throw new DotenvSyntaxError(`line ${lineOf(src, at)}: ${shown} cannot be part of a variable name`);
  }
  return { key: '', end: start };
}

/** The value starting at `from` and where the text after it starts. */
function readValue(src: string, from: number, key: string): { value: string; end: number } {
  const quote = src[from];
  if (quote !== '"' && quote !== "'") return unquotedValue(src, from);
  // The closing quote is the first one not preceded by a backslash, on this line or a later one.
  let close = from + 1;
  while (close < src.length && !(src[close] === quote && src[close - 1] !== '\\')) close++;
  if (close >= src.length)
    throw new DotenvSyntaxError(
      `line ${lineOf(src, from)}: the value of ${key || '(no name)'} opens a ${quote} quote that is never closed`,
    );
  // Every quote character at either edge goes, as the original trims them, not just the pair.
  let inner = src.slice(from, close);
  while (inner.startsWith(quote)) inner = inner.slice(1);
  while (inner.endsWith(quote)) inner = inner.slice(0, -1);
  return { value: quote === '"' ? unescapeDoubleQuoted(inner) : inner, end: close + 1 };
}

function unquotedValue(src: string, from: number): { value: string; end: number } {
  let end = from;
  while (end < src.length && src[end] !== '\n' && src[end] !== '\r') end++;
  let line = src.slice(from, end);
  // A comment starts at the last `#` that follows a space or tab; a `#` at the value's start is the value's.
  for (let at = line.length - 1; at > 0; at--) {
    if (line[at] === '#' && INLINE_SPACE.has(line[at - 1])) {
      line = line.slice(0, at);
      break;
    }
  }
  let first = 0;
  let last = line.length;
  while (first < last && INLINE_SPACE.has(line[first])) first++;
  while (last > first && INLINE_SPACE.has(line[last - 1])) last--;
  return { value: line.slice(first, last).replaceAll('\\$', '$'), end };
}

/**
 * The escapes of a double-quoted value, in the original's three passes (their order shows in corner
 * cases such as `\\$`, which ends up `$`): first `\n` and `\r` become a line break and a carriage return;
 * then a backslash before any character but `$` gives that character; last `\$` gives `$`.
 */
function unescapeDoubleQuoted(inner: string): string {
  const breaks = inner.replace(/\\[^\n]/gu, (pair) => (pair === '\\n' ? '\n' : pair === '\\r' ? '\r' : pair));
  return breaks.replace(/\\([^$])/gu, '$1').replaceAll('\\$', '$');
}

function lineOf(src: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at; i++) if (src[i] === '\n') line++;
  return line;
}
