// Go's template language for mail subjects, mail bodies and SMS_TEMPLATE, so that templates written for
// the original service keep working (docs/one-time-codes-and-mail.md#template-language): fields, pipelines,
// the predefined functions, if / else, with, range and variables. Parsing is in go-template-parse.ts,
// running in go-template-exec.ts, the functions in go-template-functions.ts.
import { executeGoTemplate, type FieldLookup } from './go-template-exec.js';
import { parseGoTemplate, type TemplateNode } from './go-template-parse.js';

export { GoTemplateLimitError, type FieldLookup } from './go-template-exec.js';
export { GoTemplateSyntaxError } from './go-template-parse.js';
export { escapeHtml } from './go-template-functions.js';

/** Parsed templates by source: the same few templates render over and over. */
const parsed = new Map<string, TemplateNode[]>();
const PARSED_KEPT = 64;

/**
 * Renders `template`, passing each printed value through `escape` (identity for plain text). Throws
 * GoTemplateSyntaxError when the template does not parse and GoTemplateLimitError when it runs too long.
 */
export function renderGoTemplate(template: string, lookup: FieldLookup, escape: (text: string) => string = (t) => t): string {
  return executeGoTemplate(parsedTemplate(template), lookup, escape);
}

/** Throws GoTemplateSyntaxError when `template` does not parse; used to refuse it before it is needed. */
export function checkGoTemplate(template: string): void {
  parsedTemplate(template);
}

function parsedTemplate(template: string): TemplateNode[] {
  let nodes = parsed.get(template);
  if (nodes === undefined) {
    nodes = parseGoTemplate(template);
    if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value as string);
    parsed.set(template, nodes);
  }
  return nodes;
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
