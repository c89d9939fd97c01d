// The short HTML page Go's http.Redirect writes under a redirect answering a GET, which every redirect of
// the original's goes through: `<a href="…">Found</a>.` and two line feeds, the target HTML-escaped, as
// text/html (a HEAD gets the type and no body; other methods neither). Old user agents that do not follow
// a Location show it as a link.
import { STATUS_CODES } from 'node:http';
import { escapeHtml } from '../delivery/mail/go-template-functions.js';

/** The page under a `status` redirect to `location`. */
export function goRedirectPage(status: number, location: string): string {
  return `<a href="${escapeHtml(location)}">${STATUS_CODES[status] ?? ''}</a>.\n\n`;
}
