// An outbound call made while a request runs (a provider's token or user endpoint, OIDC discovery, SAML
// artifact resolution) must give up before the request's own deadline (API_MAX_REQUEST_DURATION). Its own
// bound (INTERNAL_HTTP_TIMEOUT) is as long by default, so the two raced: a provider that never answered
// ended /callback as a JSON 504 instead of the redirect carrying its error that docs/api.md promises.
// Here the call is given the time left before the deadline less ANSWER_MARGIN_MS, and the route's own
// refusal is answered in time. The call itself is not cut: it ends by its own bound, its answer unread.
import type { ApiRequest } from './types.js';

/**
 * What a route needs, once its outbound call has given up, to answer before the 504: a redirect or a JSON
 * refusal, no database work. Also well past the deadline clock's resolution (deadline-clock.ts).
 */
export const ANSWER_MARGIN_MS = 250;

/**
 * `call()`, or the rejection `late()` once only ANSWER_MARGIN_MS is left of the request (at once when less
 * is). `share`: the part of that time the call may take, when the route has more to do after it.
 */
export function beforeDeadline<T>(req: Pick<ApiRequest, 'msLeft'>, call: () => Promise<T>, late: () => Error, share = 1): Promise<T> {
  const budget = (req.msLeft() - ANSWER_MARGIN_MS) * share;
  if (budget === Infinity) return call();
  if (budget <= 0) return Promise.reject(late());
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), budget);
    call().then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
