// Which requests' bodies the original's request logger reads before any handler runs. For its referer field
// it looks up redirect_to with ParseForm on every request but /health, unless a `redirect_to` header names
// the target; on /token it also reads grant_type with FormValue, which parses the form header or not. A
// POST, PUT or PATCH with an application/x-www-form-urlencoded body has that body read into the form then
// (go-form.ts), and a handler decoding JSON from it afterwards finds it empty (docs/api.md#forms-read-before-the-handler).
import { redirectToHeader } from './redirect-target.js';

/** Whether the logger parses the form of a request whose body is a posted form (go-form.ts postsForm). */
export const loggerTakesForm = (req: { path: string; headers: Record<string, string> }): boolean =>
  req.path === '/token' || (req.path !== '/health' && !redirectToHeader(req.headers));
