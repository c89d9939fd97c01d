// A request's form as Go's ParseForm builds it (docs/api.md#query-strings): for a POST, PUT or PATCH whose
// media type is application/x-www-form-urlencoded, the body's pairs, then the query string's, each read as
// go-query.ts reads a query; so for a name sent in both places the body's first value counts. Any other
// body adds nothing (ParseForm leaves multipart/form-data to ParseMultipartForm).
import type { ApiRequest } from './types.js';
import { mediaTypeOf } from './media-type.js';
import { goParseQuery, type GoQuery } from './go-query.js';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

type FormSource = Pick<ApiRequest<unknown>, 'method' | 'headers' | 'rawBody' | 'rawQuery'>;

/** Whether ParseForm reads this request's body: one method test, and a content-type test only for a body method. */
export const postsForm = (req: Pick<ApiRequest<unknown>, 'method' | 'headers'>): boolean =>
  WITH_BODY.has(req.method) && mediaTypeOf(req) === 'application/x-www-form-urlencoded';

/** The merged form, and whether the body or the query held a pair Go's parser refuses (ParseForm's error). */
export function goForm(req: FormSource, posted = postsForm(req)): GoQuery {
  const body = goParseQuery(posted ? req.rawBody.toString('utf8') : '');
  const query = goParseQuery(req.rawQuery);
  for (const [name, value] of query.values) body.values.append(name, value);
  return { values: body.values, malformed: body.malformed || query.malformed };
}
