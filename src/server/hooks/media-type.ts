// A hook answer's Content-Type parsed with the rules the original's MIME parser applies (RFC 2045 tokens:
// `type/subtype`, then `; name=value` parameters with token or quoted values), so a header it refuses is
// refused here with the same reason (docs/hooks.md#http-endpoints).

export type MediaType = { mediaType: string } | { problem: string };

const TSPECIALS = '()<>@,;:\\"/[]?=';
// The whitespace the original trims and skips (Unicode spaces; a header holds Latin-1 only).
const SPACE = /^[\t\n\v\f\r \x85\xa0]*/;

/** The lower-cased media type, or the parser's complaint ("mime: …"). */
export function parseMediaType(header: string): MediaType {
  const semicolon = header.indexOf(';');
  const base = semicolon === -1 ? header : header.slice(0, semicolon);
  const mediaType = trimSpace(base.toLowerCase());
  const problem = mediaTypeProblem(mediaType);
  if (problem) return { problem };
  const params = new Map<string, string>();
  let rest = header.slice(base.length);
  while (rest.length > 0) {
    rest = rest.replace(SPACE, '');
    if (rest === '') break;
    const param = consumeParam(rest);
    if (!param) {
      // A trailing semicolon is allowed; anything else that is not name=value is not.
      if (trimSpace(rest) === ';') break;
      return { problem: 'mime: invalid media parameter' };
    }
    const seen = params.get(param.name);
    // The same parameter twice is allowed only with the same value.
    if (seen !== undefined && seen !== param.value) return { problem: 'mime: duplicate parameter name' };
    params.set(param.name, param.value);
    rest = param.rest;
  }
  return { mediaType };
}

function mediaTypeProblem(s: string): string | null {
  const [type, rest] = consumeToken(s);
  if (type === '') return 'mime: no media type';
  if (rest === '') return null;
  if (!rest.startsWith('/')) return 'mime: expected slash after first token';
  const [subtype, after] = consumeToken(rest.slice(1));
  if (subtype === '') return 'mime: expected token after slash';
  if (after !== '') return 'mime: unexpected content after media subtype';
  return null;
}

function consumeParam(v: string): { name: string; value: string; rest: string } | null {
  const start = v.replace(SPACE, '');
  if (!start.startsWith(';')) return null;
  const [name, afterName] = consumeToken(start.slice(1).replace(SPACE, ''));
  if (name === '') return null;
  let rest = afterName.replace(SPACE, '');
  if (!rest.startsWith('=')) return null;
  rest = rest.slice(1).replace(SPACE, '');
  const [value, after] = consumeValue(rest);
  if (value === '' && after === rest) return null;
  return { name: name.toLowerCase(), value, rest: after };
}

function consumeToken(v: string): [string, string] {
  let end = 0;
  while (end < v.length && isTokenChar(v[end])) end++;
  return [v.slice(0, end), v.slice(end)];
}

/** A token or a quoted string (backslash escapes a tspecial only); ['', v] when neither is there. */
function consumeValue(v: string): [string, string] {
  if (!v.startsWith('"')) return consumeToken(v);
  let value = '';
  for (let i = 1; i < v.length; i++) {
    const c = v[i];
    if (c === '"') return [value, v.slice(i + 1)];
    if (c === '\\' && i + 1 < v.length && TSPECIALS.includes(v[i + 1])) {
      value += v[++i];
      continue;
    }
    if (c === '\r' || c === '\n') return ['', v];
    value += c;
  }
  return ['', v];
}

function isTokenChar(c: string): boolean {
  const code = c.charCodeAt(0);
  return code > 0x20 && code < 0x7f && !TSPECIALS.includes(c);
}

function trimSpace(s: string): string {
  return s.replace(SPACE, '').replace(/[\t\n\v\f\r \x85\xa0]*$/, '');
}
