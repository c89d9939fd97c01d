// The form of POST /oauth/token, read the way the original reads it (Go's ParseForm, then FormValue): the
// body's fields when its media type is application/x-www-form-urlencoded, then the query string's, so a
// client may put some parameters in the URL, and for a name sent in both places the body's first value
// counts. Any other body adds nothing. That includes multipart/form-data (`curl -F`): the original's
// ParseForm skips that type, and FormValue would parse it only if no ParseForm had run, so a multipart
// body's fields are never seen there and are not here either.
import type { ApiRequest } from '../http/types.js';
import { mediaTypeOf } from '../http/media-type.js';
import { goParseQuery } from '../http/go-query.js';

const URLENCODED = 'application/x-www-form-urlencoded';

/**
 * The merged form, or undefined when the body or the query string holds a pair Go's query parser refuses
 * (go-query.ts): here its error is checked, so one such pair fails the whole form.
 */
export function formValues(req: ApiRequest<unknown>): URLSearchParams | undefined {
  const body = goParseQuery(mediaTypeOf(req) === URLENCODED ? req.rawBody.toString('utf8') : '');
  const query = goParseQuery(req.rawQuery);
  if (body.malformed || query.malformed) return undefined;
  for (const [name, value] of query.values) body.values.append(name, value);
  return body.values;
}
