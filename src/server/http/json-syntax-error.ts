// The words the original answers a malformed JSON body with. Its Go decoder checks the whole body byte by
// byte before reading it, and its 400 bad_json quotes that check's first complaint ("invalid character 'g'
// looking for beginning of value", "unexpected end of JSON input"). Clients and their tests match on those
// words, so a body JSON.parse refuses is walked again here the way Go walks it, to say what Go would say.
// Only refused bodies come here: the accepted ones never pay for a second walk.

import { MAX_JSON_DEPTH } from './json-depth.js';

/** What a value just closed sits in: an object before its ':', an object after it, or an array. */
type Container = 'objectKey' | 'objectValue' | 'array';

type Mode =
  | 'value' // a value must start here
  | 'valueOrClose' // just after '[': a value, or ']'
  | 'keyOrClose' // just after '{': a member's name, or '}'
  | 'key' // after ',' in an object: a member's name
  | 'afterValue' // a value has ended: what may follow is up to its container
  | 'trailing' // the body's value is complete: only whitespace may follow
  | 'string'
  | 'escape' // after '\' in a string
  | 'hexEscape' // inside the four digits of \u
  | 'minus'
  | 'zero' // a number's integer part is 0
  | 'integer' // a number's integer part started with 1-9
  | 'point'
  | 'fraction'
  | 'exponentMark' // after e or E
  | 'exponentSign'
  | 'exponent'
  | 'literal' // inside true, false or null
  | 'failed';

const SPACE = 0x20;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const isWhitespace = (c: number) => c === SPACE || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= DIGIT_0 && c <= DIGIT_9;
const isHexDigit = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isExponentMark = (c: number) => c === 0x65 || c === 0x45;

/** The characters a string may escape with one letter, besides u. */
const SHORT_ESCAPES = new Set([...'bfnrt\\/"'].map((ch) => ch.charCodeAt(0)));

const LITERALS: ReadonlyMap<string, string> = new Map([
  ['t', 'true'],
  ['f', 'false'],
  ['n', 'null'],
]);

/**
 * The text Go's encoding/json gives for a body it refuses, or null when it reads the body as JSON (a value
 * nested deeper than MAX_JSON_DEPTH is refused, as Go refuses it).
 */
export function goJsonSyntaxError(body: Uint8Array): string | null {
  const walk = new SyntaxWalk();
  for (const byte of body) {
    if (!walk.step(byte)) return walk.error;
  }
  return walk.finish();
}

/**
 * What json.Decoder.Decode reads of a body: its first JSON value, whatever follows left unread and unchecked
 * (a body's length in bytes of it), or the words of its failure: "EOF" for a body of nothing but white space,
 * "unexpected EOF" for one that ends inside its value (where the whole-body check says "unexpected end of
 * JSON input", or names the last byte: "1."), else the complaint about the offending byte that check makes.
 */
export function goDecoderValue(body: Uint8Array): { length: number } | { error: string } {
  const walk = new SyntaxWalk();
  for (let i = 0; i < body.length; i++) {
    const ok = walk.step(body[i]);
    // A closing bracket is the value's last byte; any other value ends at the byte after it (not its part).
    if (walk.ended) return { length: walk.ended === 'closed' ? i + 1 : i };
    if (!ok) return { error: walk.error ?? '' };
  }
  walk.step(SPACE);
  if (walk.ended) return { length: body.length };
  return { error: body.some((c) => !isWhitespace(c)) ? 'unexpected EOF' : 'EOF' };
}

class SyntaxWalk {
  /** How the body's value ended: at its closing bracket, or at the byte after it; null while it has not. */
  ended: 'closed' | 'followed' | null = null;
  private mode: Mode = 'value';
  private readonly open: Container[] = [];
  private literalWord = '';
  private literalMatched = 0;
  private hexDigitsLeft = 0;
  error: string | null = null;

  /** false once the body has failed; the failure's text is in error. */
  step(c: number): boolean {
    switch (this.mode) {
      case 'value':
        this.beginValue(c);
        break;
      case 'valueOrClose':
        if (c === 0x5d) this.afterValue(c);
        else this.beginValue(c);
        break;
      case 'keyOrClose':
        if (c === 0x7d) {
          // An empty object closes as one whose last member has just been read.
          this.open[this.open.length - 1] = 'objectValue';
          this.afterValue(c);
        } else this.beginKey(c);
        break;
      case 'key':
        this.beginKey(c);
        break;
      case 'afterValue':
        this.afterValue(c);
        break;
      case 'trailing':
        this.trailing(c);
        break;
      case 'string':
        this.inString(c);
        break;
      case 'escape':
        this.inEscape(c);
        break;
      case 'hexEscape':
        this.inHexEscape(c);
        break;
      case 'literal':
        this.inLiteral(c);
        break;
      case 'failed':
        break;
      default:
        this.inNumber(c);
    }
    return this.mode !== 'failed';
  }

  /**
   * Go's end of input: a last space ends a number the body closes with; any other unfinished value is
   * "unexpected end", unless that space is itself what the value cannot take ("1." ends as "invalid
   * character ' ' after decimal point in numeric literal").
   */
  finish(): string | null {
    if (this.complete) return null;
    if (this.step(SPACE) && !this.complete) this.error = 'unexpected end of JSON input';
    return this.error;
  }

  private get complete(): boolean {
    return this.mode === 'trailing';
  }

  private beginValue(c: number): void {
    if (isWhitespace(c)) return;
    const ch = String.fromCharCode(c);
    if (ch === '{') this.enter('objectKey', 'keyOrClose', c);
    else if (ch === '[') this.enter('array', 'valueOrClose', c);
    else if (ch === '"') this.mode = 'string';
    else if (ch === '-') this.mode = 'minus';
    else if (ch === '0') this.mode = 'zero';
    else if (isDigit(c)) this.mode = 'integer';
    else this.beginLiteral(c, LITERALS.get(ch));
  }

  private beginLiteral(c: number, word: string | undefined): void {
    if (word === undefined) return this.fail(c, 'looking for beginning of value');
    this.literalWord = word;
    this.literalMatched = 1;
    this.mode = 'literal';
  }

  private enter(container: Container, mode: Mode, opener: number): void {
    this.open.push(container);
    this.mode = mode;
    if (this.open.length > MAX_JSON_DEPTH) this.fail(opener, 'exceeded max depth');
  }

  private beginKey(c: number): void {
    if (isWhitespace(c)) return;
    if (c === 0x22) this.mode = 'string';
    else this.fail(c, 'looking for beginning of object key string');
  }

  private afterValue(c: number): void {
    const container = this.open[this.open.length - 1];
    if (container === undefined) {
      this.ended ??= 'followed';
      this.mode = 'trailing';
      this.trailing(c);
      return;
    }
    this.mode = 'afterValue';
    if (isWhitespace(c)) return;
    const ch = String.fromCharCode(c);
    if (container === 'objectKey') {
      if (ch !== ':') return this.fail(c, 'after object key');
      this.open[this.open.length - 1] = 'objectValue';
      this.mode = 'value';
    } else if (container === 'objectValue') {
      if (ch === '}') return this.close();
      if (ch !== ',') return this.fail(c, 'after object key:value pair');
      this.open[this.open.length - 1] = 'objectKey';
      this.mode = 'key';
    } else {
      if (ch === ']') return this.close();
      if (ch !== ',') return this.fail(c, 'after array element');
      this.mode = 'value';
    }
  }

  private close(): void {
    this.open.pop();
    if (this.open.length === 0) this.ended = 'closed';
    this.mode = this.open.length === 0 ? 'trailing' : 'afterValue';
  }

  private trailing(c: number): void {
    if (!isWhitespace(c)) this.fail(c, 'after top-level value');
  }

  private inString(c: number): void {
    if (c === 0x22) this.mode = 'afterValue';
    else if (c === 0x5c) this.mode = 'escape';
    else if (c < SPACE) this.fail(c, 'in string literal');
    // Any other byte, invalid UTF-8 included, is part of the string: Go checks no encoding here.
  }

  private inEscape(c: number): void {
    if (SHORT_ESCAPES.has(c)) this.mode = 'string';
    else if (c === 0x75) {
      this.hexDigitsLeft = 4;
      this.mode = 'hexEscape';
    } else this.fail(c, 'in string escape code');
  }

  private inHexEscape(c: number): void {
    if (!isHexDigit(c)) return this.fail(c, 'in \\u hexadecimal character escape');
    if (--this.hexDigitsLeft === 0) this.mode = 'string';
  }

  private inLiteral(c: number): void {
    const expected = this.literalWord[this.literalMatched];
    if (c !== expected.charCodeAt(0)) return this.fail(c, `in literal ${this.literalWord} (expecting '${expected}')`);
    if (++this.literalMatched === this.literalWord.length) this.mode = 'afterValue';
  }

  /** A number's grammar; a byte that cannot continue a complete number ends it, and is read after it. */
  private inNumber(c: number): void {
    switch (this.mode) {
      case 'minus':
        if (c === DIGIT_0) this.mode = 'zero';
        else if (isDigit(c)) this.mode = 'integer';
        else this.fail(c, 'in numeric literal');
        return;
      case 'integer':
        if (isDigit(c)) return;
        return this.afterInteger(c);
      case 'zero':
        return this.afterInteger(c);
      case 'point':
        if (isDigit(c)) this.mode = 'fraction';
        else this.fail(c, 'after decimal point in numeric literal');
        return;
      case 'fraction':
        if (isDigit(c)) return;
        if (isExponentMark(c)) this.mode = 'exponentMark';
        else this.afterValue(c);
        return;
      case 'exponentMark':
        if (c === 0x2b || c === 0x2d) this.mode = 'exponentSign';
        else this.exponentDigit(c);
        return;
      case 'exponentSign':
        return this.exponentDigit(c);
      case 'exponent':
        if (!isDigit(c)) this.afterValue(c);
        return;
    }
  }

  private afterInteger(c: number): void {
    if (c === 0x2e) this.mode = 'point';
    else if (isExponentMark(c)) this.mode = 'exponentMark';
    else this.afterValue(c);
  }

  private exponentDigit(c: number): void {
    if (isDigit(c)) this.mode = 'exponent';
    else this.fail(c, 'in exponent of numeric literal');
  }

  private fail(c: number, context: string): void {
    this.error = `invalid character ${quoteByte(c)} ${context}`;
    this.mode = 'failed';
  }
}

/** The escapes Go's strconv.Quote writes with one letter. */
const LETTER_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0b: '\\v',
  0x0c: '\\f',
  0x0d: '\\r',
};

const hex2 = (c: number) => c.toString(16).padStart(2, '0');

/**
 * The offending byte as Go's error shows it: in single quotes, written as Go quotes a one-character string
 * (quotes and backslash escaped, control characters as \n or \x01). Go takes a byte of 0x80 or more for
 * the character of that number, so it shows as its Latin-1 character (0xC3 is 'Ã'), or as \u00XX where that
 * character is not printable (0x80-0xA0 and the soft hyphen 0xAD).
 */
function quoteByte(c: number): string {
  return `'${byteText(c)}'`;
}

function byteText(c: number): string {
  if (c === 0x27) return "\\'";
  if (c === 0x5c) return '\\\\';
  if (c >= SPACE && c < 0x7f) return String.fromCharCode(c);
  if (c in LETTER_ESCAPES) return LETTER_ESCAPES[c];
  if (c < SPACE || c === 0x7f) return `\\x${hex2(c)}`;
  if (c <= 0xa0 || c === 0xad) return `\\u00${hex2(c)}`;
  return String.fromCharCode(c);
}
