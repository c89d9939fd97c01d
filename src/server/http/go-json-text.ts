// JSON text of an answer as the original writes it: Go's json.Marshal escapes `<`, `>` and `&` (as \u003c,
// \u003e, \u0026) and the line and paragraph separators (\u2028, \u2029) inside strings, so that no answer
// read as HTML or as script source can open a tag or end a line. Every answer the original sends goes
// through it, so a metadata value holding `<script>` comes back escaped there and must here too.
// These characters only occur inside strings in JSON text, so escaping them there is escaping them
// anywhere in the text.

const HTML_UNSAFE = /[<>&\u2028\u2029]/;
const HTML_UNSAFE_ALL = /[<>&\u2028\u2029]/g;

const escapeOf = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON.stringify's text with Go's HTML-safe escapes; most answers hold none and cost one scan. */
export function goJsonText(value: unknown): string {
  return htmlSafe(JSON.stringify(value));
}

/** JSON text already written, with Go's HTML-safe escapes. */
export function htmlSafe(text: string): string {
  return HTML_UNSAFE.test(text) ? text.replace(HTML_UNSAFE_ALL, escapeOf) : text;
}
