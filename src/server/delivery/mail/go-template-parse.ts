// Parser for the part of Go's text/template language that mail subjects, mail bodies and SMS_TEMPLATE
// use (docs/one-time-codes-and-mail.md#template-language): text, field and variable actions, pipelines,
// function calls, comments, trim markers, if / else if / else, with, range (with break and continue) and
// variables. `define`, `template` and `block` are refused: a template here is one text, never a set.
// A template that does not parse is refused as a whole, as Go's Parse refuses it.

import { GoTemplateSyntaxError, splitActions, type Piece, type Token } from './go-template-lex.js';

export { GoTemplateSyntaxError } from './go-template-lex.js';

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

export function parseGoTemplate(source: string): TemplateNode[] {
  const parser = new Parser(splitActions(source));
  const nodes = parser.list(0, 0);
  if (parser.stop !== null) throw new GoTemplateSyntaxError(`unexpected {{${parser.stop}}}`);
  return nodes;
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
