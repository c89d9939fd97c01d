// Which requests' bodies the original's request logger reads before any handler runs. For its referer field
// it looks up redirect_to with ParseForm on every request but /health, unless a `redirect_to` header names
// the target; on /token it also reads grant_type with FormValue, which parses the form header or not. A
// POST, PUT or PATCH with an application/x-www-form-urlencoded body has that body read into the form then
// (go-form.ts), and a handler decoding JSON from it afterwards finds it empty (docs/api.md#forms-read-before-the-handler).
// FormValue reads a multipart/form-data body too (ParseMultipartForm), but only when no ParseForm ran
// before it, since ParseForm always leaves a form behind: so only on /token with a `redirect_to` header.
// The paths are compared as sent: the router matches them undecoded, so a path that only decodes to
// /token (/%74oken) is a 404 that runs no handler, and the form matters to no answer.
import { redirectToHeader } from './redirect-target.js';
import { goForm, goMultipartForm, postedType } from './go-form.js';
import type { GoQuery } from './go-query.js';

/** The parts of a request the form is read from: the query string as sent. */
interface Posted {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
}

/** Whether the logger parses the form of a request whose body is a posted form (go-form.ts postedType). */
export const loggerTakesForm = (req: { path: string; headers: Record<string, string> }): boolean =>
  req.path === '/token' || (req.path !== '/health' && !redirectToHeader(req.headers));

/** Whether the logger's grant_type lookup reads a multipart body (go-form.ts goMultipartForm). */
export const loggerReadsMultipart = (req: { path: string; headers: Record<string, string> }): boolean =>
  req.path === '/token' && redirectToHeader(req.headers) !== '';

/**
 * The form the logger leaves a request with a body, for the handler and the log line: a urlencoded body's,
 * or (a promise of) a multipart one's where its grant_type lookup reads it; undefined for every other
 * request, which costs one media-type test.
 */
export function loggerForm(req: Posted, rawBody: Buffer): GoQuery | Promise<GoQuery | undefined> | undefined {
  const type = postedType(req);
  if (type === 'application/x-www-form-urlencoded') return goForm({ ...req, rawBody, rawQuery: req.query });
  if (type === 'multipart/form-data' && loggerReadsMultipart(req)) return goMultipartForm({ ...req, rawBody, rawQuery: req.query });
  return undefined;
}
