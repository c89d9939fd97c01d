// The form of POST /oauth/token, read the way the original reads it (Go's ParseForm, then FormValue): the
// body's fields when its media type is application/x-www-form-urlencoded, then the query string's, so a
// client may put some parameters in the URL, and for a name sent in both places the body's first value
// counts. Any other body adds nothing. That includes multipart/form-data (`curl -F`): the original's
// ParseForm skips that type, and FormValue would parse it only if no ParseForm had run, so a multipart
// body's fields are never seen there and are not here either.
import type { ApiRequest } from '../http/types.js';
import { mediaTypeOf } from '../http/media-type.js';

const URLENCODED = 'application/x-www-form-urlencoded';

// Go's query parser refuses a ';' (no longer a separator) and a '%' without two hex digits after it, and
// one such pair fails the whole form; URLSearchParams would quietly keep them.
const MALFORMED = /;|%(?![0-9A-Fa-f]{2})/;

/** The merged form, or undefined when the body or the query string is malformed. */
export function formValues(req: ApiRequest<unknown>): URLSearchParams | undefined {
  const body = mediaTypeOf(req) === URLENCODED ? req.rawBody.toString('utf8') : '';
  if (MALFORMED.test(body) || MALFORMED.test(req.rawQuery)) return undefined;
  const form = new URLSearchParams(body);
  for (const [name, value] of new URLSearchParams(req.rawQuery)) form.append(name, value);
  return form;
}
