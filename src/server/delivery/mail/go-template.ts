// A deliberately small subset of Go's text/template: operators already write templates for the
// original service, so `{{ .Name }}`, `{{.Name}}`, `{{ .Data.key }}` and the trim markers `{{- ... -}}`
// must keep working. Everything else inside `{{ }}` (if/range/pipelines/functions/comments) renders as
// the empty string rather than failing the send: a half-supported template is better than no mail.
// TODO(v2): `{{ if .X }}...{{ end }}` blocks, used by some Supabase sample templates; cost ~60 lines.

/** Looks up a dotted field path, e.g. ['Data', 'first_name']; undefined when absent. */
export type FieldLookup = (path: string[]) => unknown;

const ACTION = /\{\{([\s\S]*?)\}\}/g;
const FIELD = /^\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/;

/** Renders `template`, passing each field's text through `escape` (identity for plain text). */
export function renderGoTemplate(template: string, lookup: FieldLookup, escape: (text: string) => string = (t) => t): string {
  const parts: string[] = [];
  let last = 0;
  let trimNextLeft = false;
  for (const match of template.matchAll(ACTION)) {
    let inner = match[1];
    let text = template.slice(last, match.index);
    if (trimNextLeft) text = text.trimStart();
    // Go's trim markers need whitespace next to the dash: `{{- x}}`, `{{x -}}`.
    const trimLeft = /^-\s/.test(inner);
    const trimRight = /\s-$/.test(inner);
    if (trimLeft) {
      text = text.trimEnd();
      inner = inner.slice(1);
    }
    if (trimRight) inner = inner.slice(0, -1);
    parts.push(text, escape(fieldText(inner.trim(), lookup)));
    trimNextLeft = trimRight;
    last = match.index + match[0].length;
  }
  const tail = template.slice(last);
  parts.push(trimNextLeft ? tail.trimStart() : tail);
  return parts.join('');
}

function fieldText(action: string, lookup: FieldLookup): string {
  const field = FIELD.exec(action);
  if (!field) return '';
  const value = lookup(field[1].split('.'));
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
}

/** A lookup over a plain object tree, walking own properties only. */
export function lookupIn(root: Record<string, unknown>): FieldLookup {
  return (path) => {
    let node: unknown = root;
    for (const key of path) {
      if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
      node = (node as Record<string, unknown>)[key];
    }
    return node;
  };
}

/** HTML escaping with the entities Go's html/template emits, so rendered bodies match the original's. */
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
