// A request's form as Go's ParseForm builds it (docs/api.md#query-strings): for a POST, PUT or PATCH whose
// media type is application/x-www-form-urlencoded, the body's pairs, then the query string's, each read as
// go-query.ts reads a query; so for a name sent in both places the body's first value counts. Any other
// body adds nothing (ParseForm leaves multipart/form-data to ParseMultipartForm, goMultipartForm below).
import type { ApiRequest } from './types.js';
import { mediaTypeOf } from './media-type.js';
import { goParseQuery, type GoQuery } from './go-query.js';
import { multipartFields } from './multipart-fields.js';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

type FormSource = Pick<ApiRequest<unknown>, 'headers' | 'rawBody' | 'rawQuery'>;

/** The media type of a POST, PUT or PATCH body ('' for another method): one method test, and a content-type test only for a body method. */
export const postedType = (req: Pick<ApiRequest<unknown>, 'method' | 'headers'>): string =>
  WITH_BODY.has(req.method) ? mediaTypeOf(req) : '';

/**
 * The merged form of a request whose body ParseForm reads (postedType: urlencoded), and whether the body or
 * the query held a pair Go's parser refuses (ParseForm's error).
 */
export function goForm(req: FormSource): GoQuery {
  const body = goParseQuery(req.rawBody.toString('utf8'));
  const query = goParseQuery(req.rawQuery);
  for (const [name, value] of query.values) body.values.append(name, value);
  return { values: body.values, malformed: body.malformed || query.malformed };
}

// Go's multipart reader wants a boundary parameter; without one ParseMultipartForm stops before reading.
const BOUNDARY = /;\s*boundary\s*=/i;

/**
 * The form after FormValue's ParseMultipartForm, when no ParseForm ran before it: the query's pairs, then
 * the multipart body's text fields (multipart-fields.ts). Undefined when the media type has no boundary,
 * so the body is left unread; a body that does not parse adds no field but has been read all the same (Go's
 * reader consumed it up to the fault, and FormValue ignores the error).
 */
export async function goMultipartForm(req: FormSource): Promise<GoQuery | undefined> {
  const contentType = req.headers['content-type'] ?? '';
  if (!BOUNDARY.test(contentType)) return undefined;
  const form = goParseQuery(req.rawQuery);
  for (const [name, value] of (await multipartFields(req.rawBody, contentType)) ?? []) form.values.append(name, value);
  return form;
}
