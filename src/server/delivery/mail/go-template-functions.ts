// Go text/template's predefined functions, truth and printing over JSON-like values (strings, numbers,
// booleans, null, arrays, plain objects), as templates written for the original service expect them
// (docs/one-time-codes-and-mail.md#template-language). Numbers print as Go prints a float64, because the
// original decodes user_metadata into float64s: 30 prints "30", 1234567 prints "1.234567e+06".
import { goQuoted } from '../../go-quoted.js';
import { goQueryEscape } from '../../http/go-url.js';

/** An action that cannot be evaluated (Go's execution error); the renderer turns it into nothing. */
export class TemplateExecError extends Error {
  override readonly name = 'TemplateExecError';
}

type Argument = () => unknown;

/** Go's truth: false, 0, nil and empty strings, arrays and maps are false; everything else is true. */
export function isTrue(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** What an action prints: Go's %v, except that a missing value prints nothing (as html/template does). */
export function printed(value: unknown): string {
  return value === undefined || value === null ? '' : formatValue(value);
}

/** Go's %v for a JSON-like value. */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return formatFloat(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(formatValue).join(' ')}]`;
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const entries = Object.keys(object)
      .sort()
      .map((key) => `${key}:${formatValue(object[key])}`);
    return `map[${entries.join(' ')}]`;
  }
  return '';
}

/** strconv's shortest %g for a float64, with fmt's switch to an exponent from 1e+06 and below 1e-04. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent >= -4 && exponent < 6) return String(value);
  const sign = exponent < 0 ? '-' : '+';
  return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** HTML escaping with the entities Go's html/template emits. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'\0]/g, (c) => HTML_ENTITIES[c]);
}

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&#34;',
  "'": '&#39;',
  '\0': '\uFFFD',
};

export function callBuiltin(name: string, args: Argument[]): unknown {
  const builtin = BUILTINS[name];
  if (!builtin) throw new TemplateExecError(`function "${name}" not defined`);
  return builtin(args);
}

const BUILTINS: Record<string, (args: Argument[]) => unknown> = {
  and: (args) => {
    atLeast(args, 1, 'and');
    let value: unknown;
    for (const arg of args) if (!isTrue((value = arg()))) return value;
    return value;
  },
  or: (args) => {
    atLeast(args, 1, 'or');
    let value: unknown;
    for (const arg of args) if (isTrue((value = arg()))) return value;
    return value;
  },
  not: (args) => !isTrue(exactly(args, 1, 'not')[0]),
  len: (args) => {
    const [value] = exactly(args, 1, 'len');
    if (typeof value === 'string') return Buffer.byteLength(value);
    if (Array.isArray(value)) return value.length;
    if (value !== null && typeof value === 'object') return Object.keys(value).length;
    throw new TemplateExecError('len of this value');
  },
  index: (args) => {
    atLeast(args, 1, 'index');
    const [value, ...keys] = args.map((arg) => arg());
    return keys.reduce(indexed, value);
  },
  slice: (args) => {
    atLeast(args, 1, 'slice');
    const [value, ...bounds] = args.map((arg) => arg());
    if (bounds.length > 2 || !bounds.every((bound) => Number.isInteger(bound))) throw new TemplateExecError('bad slice bounds');
    // Go slices a string by bytes.
    const items = typeof value === 'string' ? Buffer.from(value) : value;
    if (!Array.isArray(items) && !Buffer.isBuffer(items)) throw new TemplateExecError("can't slice this value");
    const [from = 0, to = items.length] = bounds as number[];
    if (from < 0 || to < from || to > items.length) throw new TemplateExecError('slice index out of range');
    return Buffer.isBuffer(items) ? items.subarray(from, to).toString() : items.slice(from, to);
  },
  eq: (args) => {
    atLeast(args, 2, 'eq');
    const [first, ...others] = args.map((arg) => arg());
    return others.some((other) => equal(first, other));
  },
  ne: (args) => !equal(...(exactly(args, 2, 'ne') as [unknown, unknown])),
  lt: (args) => compare(exactly(args, 2, 'lt')) < 0,
  le: (args) => compare(exactly(args, 2, 'le')) <= 0,
  gt: (args) => compare(exactly(args, 2, 'gt')) > 0,
  ge: (args) => compare(exactly(args, 2, 'ge')) >= 0,
  print: (args) => sprint(args.map((arg) => arg())),
  println: (args) => `${args.map((arg) => formatValue(arg())).join(' ')}\n`,
  printf: (args) => {
    atLeast(args, 1, 'printf');
    const [format, ...values] = args.map((arg) => arg());
    if (typeof format !== 'string') throw new TemplateExecError('printf format must be a string');
    return sprintf(format, values);
  },
  html: (args) => escapeHtml(sprint(args.map((arg) => arg()))),
  js: (args) => escapeJs(sprint(args.map((arg) => arg()))),
  urlquery: (args) => goQueryEscape(sprint(args.map((arg) => arg()))),
};

function atLeast(args: Argument[], count: number, name: string): void {
  if (args.length < count) throw new TemplateExecError(`wrong number of args for ${name}`);
}

function exactly(args: Argument[], count: number, name: string): unknown[] {
  if (args.length !== count) throw new TemplateExecError(`wrong number of args for ${name}`);
  return args.map((arg) => arg());
}

function indexed(value: unknown, key: unknown): unknown {
  if (Array.isArray(value) || typeof value === 'string') {
    const items = typeof value === 'string' ? Buffer.from(value) : value;
    if (!Number.isInteger(key) || (key as number) < 0 || (key as number) >= items.length) {
      throw new TemplateExecError('index out of range');
    }
    return items[key as number];
  }
  if (value !== null && typeof value === 'object') {
    if (typeof key !== 'string') throw new TemplateExecError('map key must be a string');
    return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  throw new TemplateExecError("can't index this value");
}

/** Go's eq: a missing value equals only another missing value; other kinds must match and be basic. */
function equal(a: unknown, b: unknown): boolean {
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  if (typeof a !== typeof b || typeof a === 'object') throw new TemplateExecError('incompatible types for comparison');
  return a === b;
}

/** Go's lt and friends: numbers with numbers, strings with strings (byte order). */
function compare([a, b]: unknown[]): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
  throw new TemplateExecError('incompatible types for comparison');
}

/** fmt.Sprint: a space between two operands when neither is a string. */
function sprint(values: unknown[]): string {
  let out = '';
  values.forEach((value, at) => {
    if (at > 0 && typeof value !== 'string' && typeof values[at - 1] !== 'string') out += ' ';
    out += formatValue(value);
  });
  return out;
}

/** fmt.Sprintf for the verbs templates use: %v %s %d %t %q %x %f %%, with Go's error markers. */
function sprintf(format: string, values: unknown[]): string {
  let next = 0;
  return format.replace(/%([-+# 0]*)(\d*)(?:\.(\d+))?([a-zA-Z%])?/g, (_whole, _flags, _width, precision, verb?: string) => {
    if (verb === undefined) return '%!(NOVERB)';
    if (verb === '%') return '%';
    if (next >= values.length) return `%!${verb}(MISSING)`;
    const value = values[next++];
    switch (verb) {
      case 'v':
      case 's':
        return formatValue(value);
      case 'd':
        return typeof value === 'number' && Number.isInteger(value) ? String(value) : `%!d(${formatValue(value)})`;
      case 't':
        return typeof value === 'boolean' ? String(value) : `%!t(${formatValue(value)})`;
      case 'q':
        return typeof value === 'string' ? goQuoted(value) : `%!q(${formatValue(value)})`;
      case 'x':
        return typeof value === 'string' ? Buffer.from(value).toString('hex') : `%!x(${formatValue(value)})`;
      case 'f':
        return typeof value === 'number' ? value.toFixed(precision === undefined ? 6 : Number(precision)) : `%!f(${formatValue(value)})`;
      default:
        return `%!${verb}(${formatValue(value)})`;
    }
  });
}

/** Go's JSEscapeString: quotes and backslash escaped, HTML-significant characters and controls as \u escapes. */
function escapeJs(text: string): string {
  let out = '';
  for (const c of text) {
    if (c === '\\' || c === "'" || c === '"') out += `\\${c}`;
    else if ('<>&=`'.includes(c) || c.charCodeAt(0) < 0x20) out += `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    else out += c;
  }
  return out;
}
