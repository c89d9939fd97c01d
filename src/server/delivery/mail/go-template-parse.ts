// Parser for the part of Go's text/template language that mail subjects, mail bodies and SMS_TEMPLATE
// use (docs/one-time-codes-and-mail.md#template-language): text, field and variable actions, pipelines,
// function calls, comments, trim markers, if / else if / else, with, range (with break and continue) and
// variables. `define`, `template` and `block` are refused: a template here is one text, never a set.
// A template that does not parse is refused as a whole, as Go's Parse refuses it.

export class GoTemplateSyntaxError extends Error {
  override readonly name = 'GoTemplateSyntaxError';
}

/** An operand of a command. Field paths are relative to `.`, or to a variable (`$`, `$x`). */
export type Operand =
  | { kind: 'dot'; path: string[] }
  | { kind: 'variable'; name: string; path: string[] }
  | { kind: 'function'; name: string }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'pipeline'; pipeline: Pipeline; path: string[] };

/** One command of a pipeline: a function with its arguments, or a single operand. */
export type Command = Operand[];

export interface Pipeline {
  /** variables declared (`:=`) or assigned (`=`) by the pipeline's result */
  variables: string[];
  assign: boolean;
  commands: Command[];
}

export type TemplateNode =
  | { kind: 'text'; text: string }
  | { kind: 'print'; pipeline: Pipeline }
  | { kind: 'if' | 'with' | 'range'; pipeline: Pipeline; body: TemplateNode[]; otherwise: TemplateNode[] }
  | { kind: 'break' | 'continue' };

export const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set([
  'and',
  'or',
  'not',
  'len',
  'index',
  'slice',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'print',
  'printf',
  'println',
  'html',
  'js',
  'urlquery',
]);

/** Go nests parenthesised pipelines and blocks without limit; a bound keeps a hostile template off the stack. */
const MAX_DEPTH = 100;

type Token =
  | { kind: 'field'; path: string[] }
  | { kind: 'variable'; name: string; path: string[] }
  | { kind: 'identifier'; name: string }
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: ')'; path: string[] }
  | { kind: '(' | '|' | ':=' | '=' | ',' | 'end-of-action' };

/** An action's tokens, always ending with 'end-of-action'; a comment is no piece at all. */
type Piece = { kind: 'text'; text: string } | { kind: 'action'; tokens: Token[] };

export function parseGoTemplate(source: string): TemplateNode[] {
  const parser = new Parser(splitActions(source));
  const nodes = parser.list(0, 0);
  if (parser.stop !== null) throw new GoTemplateSyntaxError(`unexpected {{${parser.stop}}}`);
  return nodes;
}

// ---------------------------------------------------------------------------------------------------
// Lexing: the source becomes text pieces and actions (each a token list), with trim markers applied.

const SPACE = /[ \t\r\n]/;
const TRIMMED_CLOSE = /[ \t\r\n]+-\}\}/y;
const IDENTIFIER = /[\p{L}_][\p{L}_0-9]*/uy;
const VARIABLE = /\$[\p{L}_0-9]*/uy;
const NUMBER = /[-+]?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(\d[\d_]*)?\.?\d*([eE][-+]?\d+)?)/y;

function splitActions(source: string): Piece[] {
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

// ---------------------------------------------------------------------------------------------------
// Parsing: actions become nodes; control actions nest until their `end`.

class Parser {
  private at = 0;
  /** the keyword action that ended the last list: 'end', 'else', or null at the end of the source */
  stop: string | null = null;
  /** the rest of an `else` action (`else if x`, `else with x`), for the enclosing block to read */
  private elseTokens: Token[] = [];

  constructor(private readonly pieces: Piece[]) {}

  /** Nodes until an `end` or `else` action (recorded in `stop`) or the end of the source. */
  list(depth: number, loops: number): TemplateNode[] {
    if (depth > MAX_DEPTH) throw new GoTemplateSyntaxError('template nested too deeply');
    const nodes: TemplateNode[] = [];
    this.stop = null;
    while (this.at < this.pieces.length) {
      const piece = this.pieces[this.at++];
      if (piece.kind === 'text') {
        if (piece.text !== '') nodes.push({ kind: 'text', text: piece.text });
        continue;
      }
      const tokens = piece.tokens;
      const first = tokens[0];
      const keyword = first.kind === 'identifier' ? first.name : null;
      switch (keyword) {
        case 'end':
          expectEnd(tokens, 1, 'end');
          this.stop = 'end';
          return nodes;
        case 'else':
          this.stop = 'else';
          this.elseTokens = tokens.slice(1);
          return nodes;
        case 'if':
        case 'with':
        case 'range':
          nodes.push(this.block(keyword, tokens.slice(1), depth, keyword === 'range' ? loops + 1 : loops));
          break;
        case 'break':
        case 'continue':
          if (loops === 0) throw new GoTemplateSyntaxError(`{{${keyword}}} outside {{range}}`);
          expectEnd(tokens, 1, keyword);
          nodes.push({ kind: keyword });
          break;
        case 'define':
        case 'template':
        case 'block':
          throw new GoTemplateSyntaxError(`{{${keyword}}} is not supported: a template here is a single text`);
        default:
          nodes.push({ kind: 'print', pipeline: pipeline(tokens, 'command', depth) });
      }
    }
    return nodes;
  }

  private block(keyword: 'if' | 'with' | 'range', tokens: Token[], depth: number, loops: number): TemplateNode {
    const head = pipeline(tokens, keyword, depth);
    if (keyword === 'range' ? head.variables.length > 2 : head.variables.length > 1) {
      throw new GoTemplateSyntaxError(`too many declarations in ${keyword}`);
    }
    const body = this.list(depth + 1, loops);
    let otherwise: TemplateNode[] = [];
    if (this.stop === 'else') {
      const rest = this.elseTokens;
      const chained = rest[0]?.kind === 'identifier' && (rest[0].name === 'if' || rest[0].name === 'with') ? rest[0].name : null;
      if (chained !== null && keyword !== 'range') {
        // `{{else if x}}` is an `if` inside the else branch that shares this block's `end`.
        otherwise = [this.block(chained, rest.slice(1), depth + 1, loops)];
        return { kind: keyword, pipeline: head, body, otherwise };
      }
      expectEnd(rest, 0, 'else');
      otherwise = this.list(depth + 1, keyword === 'range' ? loops - 1 : loops);
    }
    if (this.stop !== 'end') throw new GoTemplateSyntaxError(`unexpected end of template in {{${keyword}}}`);
    this.stop = null;
    return { kind: keyword, pipeline: head, body, otherwise };
  }
}

function expectEnd(tokens: Token[], at: number, what: string): void {
  if (tokens[at]?.kind !== 'end-of-action') throw new GoTemplateSyntaxError(`unexpected token after {{${what}}}`);
}

/** A pipeline from `tokens` up to the end of the action (or, inside parentheses, the closing one). */
function pipeline(tokens: Token[], context: string, depth: number): Pipeline {
  return readPipeline(tokens, { at: 0 }, context, depth, 'end-of-action');
}

function readPipeline(tokens: Token[], cursor: { at: number }, context: string, depth: number, closer: ')' | 'end-of-action'): Pipeline {
  if (depth > MAX_DEPTH) throw new GoTemplateSyntaxError('template nested too deeply');
  const variables: string[] = [];
  let assign = false;
  // `$x :=`, `$x =`, `$i, $v :=`: look ahead for a declaration.
  const declaration = declaredVariables(tokens, cursor.at);
  if (declaration) {
    variables.push(...declaration.names);
    assign = declaration.assign;
    cursor.at = declaration.next;
  }
  const commands: Command[] = [];
  for (;;) {
    const command: Command = [];
    for (;;) {
      const token = tokens[cursor.at];
      if (token.kind === '|' || token.kind === closer || (closer === ')' && token.kind === 'end-of-action')) break;
      cursor.at += 1;
      command.push(operand(token, tokens, cursor, context, depth));
    }
    if (command.length === 0) throw new GoTemplateSyntaxError(`missing value for ${context}`);
    commands.push(command);
    const token = tokens[cursor.at];
    if (token.kind === '|') {
      cursor.at += 1;
      continue;
    }
    if (token.kind !== closer) throw new GoTemplateSyntaxError('unclosed left paren');
    cursor.at += 1;
    return { variables, assign, commands };
  }
}

function declaredVariables(tokens: Token[], at: number): { names: string[]; assign: boolean; next: number } | null {
  const names: string[] = [];
  let cursor = at;
  for (;;) {
    const token = tokens[cursor];
    if (token?.kind !== 'variable' || token.path.length > 0) return null;
    names.push(token.name);
    const after = tokens[cursor + 1];
    if (after?.kind === ':=' || after?.kind === '=') return { names, assign: after.kind === '=', next: cursor + 2 };
    if (after?.kind !== ',' || names.length === 2) return null;
    cursor += 2;
  }
}

function operand(token: Token, tokens: Token[], cursor: { at: number }, context: string, depth: number): Operand {
  switch (token.kind) {
    case 'field':
      return { kind: 'dot', path: token.path };
    case 'variable':
      return { kind: 'variable', name: token.name, path: token.path };
    case 'literal':
      return { kind: 'literal', value: token.value };
    case 'identifier':
      if (!BUILTIN_FUNCTIONS.has(token.name)) throw new GoTemplateSyntaxError(`function "${token.name}" not defined`);
      return { kind: 'function', name: token.name };
    case '(': {
      const inner = readPipeline(tokens, cursor, context, depth + 1, ')');
      const closer = tokens[cursor.at - 1];
      return { kind: 'pipeline', pipeline: inner, path: closer.kind === ')' ? closer.path : [] };
    }
    default:
      throw new GoTemplateSyntaxError(`unexpected ${token.kind} in ${context}`);
  }
}
