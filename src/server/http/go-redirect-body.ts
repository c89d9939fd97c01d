// The short HTML page Go's http.Redirect writes under a redirect answering a GET, which every redirect of
// the original's goes through: `<a href="…">Found</a>.` and two line feeds, the target HTML-escaped, as
// text/html (a HEAD gets the type and no body; other methods neither). Old user agents that do not follow
// a Location show it as a link.
import { STATUS_CODES } from 'node:http';

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };

/** The page under a `status` redirect to `location`. */
export function goRedirectPage(status: number, location: string): string {
  const href = location.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
  return `<a href="${href}">${STATUS_CODES[status] ?? ''}</a>.\n\n`;
}
