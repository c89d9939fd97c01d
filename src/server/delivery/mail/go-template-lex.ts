// Lexer for the template language (go-template-parse.ts parses what it yields): the source becomes text
// pieces and actions, each action a token list, with the trim markers `{{- ` / ` -}}` applied and
// comments dropped (docs/one-time-codes-and-mail.md#template-language).

export class GoTemplateSyntaxError extends Error {
  override readonly name = 'GoTemplateSyntaxError';
}

export type Token =
  | { kind: 'field'; path: string[] }
  | { kind: 'variable'; name: string; path: string[] }
  | { kind: 'identifier'; name: string }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: ')'; path: string[] }
  | { kind: '(' | '|' | ':=' | '=' | ',' | 'end-of-action' };

/** An action's tokens, always ending with 'end-of-action'; a comment is no piece at all. */
export type Piece = { kind: 'text'; text: string } | { kind: 'action'; tokens: Token[] };

const SPACE = /[ \t\r\n]/;
const TRIMMED_CLOSE = /[ \t\r\n]+-\}\}/y;
const IDENTIFIER = /[\p{L}_][\p{L}_0-9]*/uy;
const VARIABLE = /\$[\p{L}_0-9]*/uy;
const NUMBER = /[-+]?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(\d[\d_]*)?\.?\d*([eE][-+]?\d+)?)/y;

export function splitActions(source: string): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  let trimNext = false;
  for (;;) {
    const open = source.indexOf('{{', at);
    let text = source.slice(at, open < 0 ? source.length : open);
    if (trimNext) text = text.trimStart();
    if (open < 0) {
      pieces.push({ kind: 'text', text });
      return pieces;
    }
    // `{{- ` trims the whitespace before the action; the space after the dash is required.
    let cursor = open + 2;
    if (source[cursor] === '-' && SPACE.test(source[cursor + 1] ?? '')) {
      text = text.trimEnd();
      cursor += 2;
    }
    pieces.push({ kind: 'text', text });
    const lexer = new ActionLexer(source, cursor);
    const tokens = lexer.tokens();
    trimNext = lexer.trimAfter;
    if (tokens !== null) pieces.push({ kind: 'action', tokens });
    at = lexer.position;
  }
}

class ActionLexer {
  trimAfter = false;

  constructor(
    private readonly source: string,
    public position: number,
  ) {}

  /** The action's tokens, or null for a comment. */
  tokens(): Token[] | null {
    const tokens: Token[] = [];
    this.skipSpace();
    if (this.source.startsWith('/*', this.position)) return this.comment();
    for (;;) {
      this.skipSpace();
      const token = this.next();
      tokens.push(token);
      if (token.kind === 'end-of-action') return tokens;
    }
  }

  private comment(): null {
    const end = this.source.indexOf('*/', this.position + 2);
    if (end < 0) throw new GoTemplateSyntaxError('unclosed comment');
    this.position = end + 2;
    if (this.closesWithTrim() || this.closes()) return null;
    throw new GoTemplateSyntaxError('comment ends before closing delimiter');
  }

  private closes(): boolean {
    if (!this.source.startsWith('}}', this.position)) return false;
    this.position += 2;
    return true;
  }

  private closesWithTrim(): boolean {
    // ` -}}`: the whitespace before the dash is required, and the text after the action is trimmed.
    const length = this.trimmedCloseLength();
    if (length === 0) return false;
    this.position += length;
    this.trimAfter = true;
    return true;
  }

  private skipSpace(): void {
    // Stops before ` -}}`, so that next() sees the trim marker with its whitespace.
    if (this.trimmedCloseLength() > 0) return;
    while (SPACE.test(this.source[this.position] ?? '')) this.position += 1;
  }

  private trimmedCloseLength(): number {
    TRIMMED_CLOSE.lastIndex = this.position;
    return TRIMMED_CLOSE.exec(this.source)?.[0].length ?? 0;
  }

  private next(): Token {
    const { source } = this;
    const c = source[this.position];
    if (c === undefined) throw new GoTemplateSyntaxError('unclosed action');
    if (this.closesWithTrim() || this.closes()) return { kind: 'end-of-action' };
    if (c === '}' || c === '{') throw new GoTemplateSyntaxError(`unexpected "${c}" in action`);
    if (source.startsWith(':=', this.position)) return this.take(2, { kind: ':=' });
    if (c === ')') {
      // `(pipeline).Field`: a field chain written right after the parenthesis belongs to it.
      this.position += 1;
      const chained = source[this.position] === '.' && /[\p{L}_]/u.test(source[this.position + 1] ?? '');
      return { kind: ')', path: chained ? this.path() : [] };
    }
    if (c === '(' || c === '|' || c === '=' || c === ',') return this.take(1, { kind: c });
    if (c === '"') return { kind: 'literal', value: this.quoted() };
    if (c === '`') return { kind: 'literal', value: this.raw() };
    if (c === "'") return { kind: 'literal', value: this.character() };
    if (c === '.' && !/[0-9]/.test(source[this.position + 1] ?? '')) return { kind: 'field', path: this.path() };
    if (c === '$') {
      const name = this.match(VARIABLE);
      return { kind: 'variable', name, path: this.path() };
    }
    if (/[-+0-9.]/.test(c)) return { kind: 'literal', value: this.number() };
    if (/[\p{L}_]/u.test(c)) {
      const name = this.match(IDENTIFIER);
      if (name === 'true' || name === 'false') return { kind: 'literal', value: name === 'true' };
      if (name === 'nil') return { kind: 'literal', value: null };
      return { kind: 'identifier', name };
    }
    throw new GoTemplateSyntaxError(`unexpected ${JSON.stringify(c)} in action`);
  }

  private take(length: number, token: Token): Token {
    this.position += length;
    return token;
  }

  /** Takes what the sticky `pattern` matches at the current position. */
  private match(pattern: RegExp): string {
    pattern.lastIndex = this.position;
    const found = pattern.exec(this.source);
    if (!found) throw new GoTemplateSyntaxError('bad token in action');
    this.position += found[0].length;
    return found[0];
  }

  /** `.A.B` as ['A', 'B']; a lone `.` as []. Also the field chain after a variable or a `)`. */
  path(): string[] {
    const path: string[] = [];
    if (this.source[this.position] === '.' && !/[\p{L}_]/u.test(this.source[this.position + 1] ?? '')) {
      this.position += 1;
      return path;
    }
    while (this.source[this.position] === '.') {
      this.position += 1;
      path.push(this.match(IDENTIFIER));
    }
    return path;
  }

  private quoted(): string {
    let out = '';
    for (let at = this.position + 1; at < this.source.length; at += 1) {
      const c = this.source[at];
      if (c === '"') {
        this.position = at + 1;
        return out;
      }
      if (c === '\n') break;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const [text, length] = unescape(this.source, at + 1);
      out += text;
      at += length;
    }
    throw new GoTemplateSyntaxError('unterminated quoted string');
  }

  private raw(): string {
    const end = this.source.indexOf('`', this.position + 1);
    if (end < 0) throw new GoTemplateSyntaxError('unterminated raw quoted string');
    const text = this.source.slice(this.position + 1, end);
    this.position = end + 1;
    return text.replaceAll('\r', '');
  }

  /** A character constant such as 'a' or '\\n', which Go reads as its code point. */
  private character(): number {
    let at = this.position + 1;
    let value: number;
    if (this.source[at] === '\\') {
      const [text, length] = unescape(this.source, at + 1);
      value = text.codePointAt(0) ?? 0;
      at += 1 + length;
    } else {
      const code = this.source.codePointAt(at);
      if (code === undefined || code === 0x27 || code === 0x0a) throw new GoTemplateSyntaxError('bad character constant');
      value = code;
      at += code > 0xffff ? 2 : 1;
    }
    if (this.source[at] !== "'") throw new GoTemplateSyntaxError('bad character constant');
    this.position = at + 1;
    return value;
  }

  private number(): number {
    const text = this.match(NUMBER);
    const sign = text.startsWith('-') ? -1 : 1;
    const digits = text.replace(/^[-+]/, '').replaceAll('_', '');
    const prefixed = /^0[xXbBoO]/.test(digits);
    const value = prefixed ? Number(digits.toLowerCase()) : Number(digits);
    if (digits === '' || digits === '.' || !Number.isFinite(value) || /[\p{L}_0-9.]/u.test(this.source[this.position] ?? '')) {
      throw new GoTemplateSyntaxError(`bad number syntax: ${text}`);
    }
    return sign * value;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
};

/** A Go escape sequence starting after the backslash at `at`: the text and how many characters it took. */
function unescape(source: string, at: number): [string, number] {
  const c = source[at];
  if (c !== undefined && c in SIMPLE_ESCAPES) return [SIMPLE_ESCAPES[c], 1];
  const width = { x: 2, u: 4, U: 8 }[c as 'x' | 'u' | 'U'];
  if (width !== undefined) {
    const hex = source.slice(at + 1, at + 1 + width);
    const code = /^[0-9a-fA-F]+$/.test(hex) && hex.length === width ? parseInt(hex, 16) : NaN;
    if (Number.isNaN(code) || code > 0x10ffff) throw new GoTemplateSyntaxError('bad escape in string');
    return [String.fromCodePoint(code), width + 1];
  }
  if (c !== undefined && /[0-7]/.test(c)) {
    const octal = source.slice(at, at + 3);
    if (!/^[0-7]{3}$/.test(octal) || parseInt(octal, 8) > 255) throw new GoTemplateSyntaxError('bad escape in string');
    return [String.fromCharCode(parseInt(octal, 8)), 3];
  }
  throw new GoTemplateSyntaxError('unknown escape sequence');
}
