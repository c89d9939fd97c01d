// A mail body that cannot be rendered (a template that runs past the render limits, or one that does not
// parse and slipped past the template cache's check) falls back to the built-in body, as a template that
// cannot be fetched does: the user still gets the link and the code (docs/one-time-codes-and-mail.md#template-language).
import type { Logger } from 'pino';
import { escapeHtml, GoTemplateLimitError, GoTemplateSyntaxError, renderGoTemplate, type FieldLookup } from './go-template.js';

export function renderMailBody(template: string, builtIn: string, lookup: FieldLookup, log: Logger): string {
  try {
    return renderGoTemplate(template, lookup, escapeHtml);
  } catch (err) {
    if (!(err instanceof GoTemplateLimitError || err instanceof GoTemplateSyntaxError) || template === builtIn) throw err;
    log.warn({ err: err.message }, 'mail template could not be rendered; using the built-in body');
    return renderGoTemplate(builtIn, lookup, escapeHtml);
  }
}
