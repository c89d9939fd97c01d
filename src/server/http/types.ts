// The shapes shared by the HTTP layer and the handlers. Handlers see a plain snapshot of the request
// (never uWS objects) and return a plain response; http.ts does the rest.
import type { AppContext } from '../context.js';

export interface ApiRequest {
  method: string;                       // upper case
  path: string;                         // without the query string
  route: string;                        // the parametrised route, e.g. /admin/users/{user_id}
  params: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string>;      // lower-case names
  ip: string;
  requestId: string;
  rawBody: Buffer;
  /** aborts when API_MAX_REQUEST_DURATION passes (the 504): pass it to tx() and the hasher */
  signal: AbortSignal;
  /** The parsed JSON body ({} when empty). Throws 400 bad_json when it does not parse. */
  body(): Record<string, unknown>;
}

export interface ApiResponse {
  status?: number;                      // default 200
  headers?: Record<string, string>;
  /** serialised as JSON unless it is a string; undefined → no body */
  body?: unknown;
}

export type Handler = (req: ApiRequest, ctx: AppContext) => Promise<ApiResponse> | ApiResponse;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string;                         // /admin/users/{user_id}
  handler: Handler;
  /** excluded from the per-request log line (the original does not log /health) */
  quiet?: boolean;
}
