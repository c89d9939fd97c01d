// The form of POST /oauth/token, read the way the original reads it (Go's ParseForm, then FormValue): the
// body's fields when its media type is application/x-www-form-urlencoded, then the query string's, so a
// client may put some parameters in the URL, and for a name sent in both places the body's first value
// counts. Any other body adds nothing. That includes multipart/form-data (`curl -F`): the original's
// ParseForm skips that type, and FormValue would parse it only if no ParseForm had run, so a multipart
// body's fields are never seen there and are not here either.
import type { ApiRequest } from '../http/types.js';
import { redirectToHeader } from '../http/redirect-target.js';

/**
 * The merged form (go-form.ts), without the pairs Go's query parser refuses; undefined when such a pair is
 * there and the request carries a `redirect_to` header. The original's handler checks the parse's error,
 * but its request logger has already parsed the form (for its referer field) and a second parse reports
 * nothing, so the check only fires when the logger did not parse: when a `redirect_to` header gave it the
 * referer (docs/api.md#query-strings).
 */
export function formValues(req: ApiRequest<unknown>): URLSearchParams | undefined {
  return req.formMalformed && redirectToHeader(req.headers) ? undefined : req.form;
}
