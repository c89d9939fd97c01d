// A request's media type as Go's mime parsing reads it for a form: the Content-Type without its parameters,
// case ignored; '' when there is none.
import type { ApiRequest } from './types.js';

export function mediaTypeOf(req: Pick<ApiRequest<unknown>, 'headers'>): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}
