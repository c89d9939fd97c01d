// The shapes shared by the HTTP layer and the handlers. Handlers see a plain snapshot of the request
// (never uWS objects) and return a plain response; server.ts does the rest. A route (routes.ts) says who
// may call it; the dispatcher (dispatch.ts) enforces that and hands the handler its principal.
import type { AppContext } from '../context.js';
import type { Admin, Authenticated, AuthenticatedWithIdentities, ClientBucket } from '../auth/principal.js';
import type { FieldNames } from './field-names.js';

export type JsonObject = Record<string, unknown>;

export interface ApiRequest<B = JsonObject> {
  method: string; // upper case
  path: string; // without the query string
  route: string; // the parametrised route, e.g. /admin/users/{user_id}
  params: Record<string, string>;
  /** the query's pairs as the original's parser keeps them (go-query.ts: a malformed pair is left out) */
  query: URLSearchParams;
  /**
   * the form as the original's r.Form holds it (go-form.ts): a posted urlencoded body's pairs, then the
   * query's (on /token with a `redirect_to` header, the query's then a multipart body's text fields); the
   * query itself for any other request. `redirect_to`, and /token's `grant_type`, are read here.
   */
  form: URLSearchParams;
  /** whether the form held a pair Go's parser refuses (ParseForm's error), which `form` leaves out */
  formMalformed: boolean;
  /** the query string as sent, without the '?' ('' when none): for a reading stricter than `query` */
  rawQuery: string;
  headers: Record<string, string>; // lower-case names
  ip: string;
  requestId: string;
  rawBody: Buffer;
  /**
   * the original's request logger already read the body as a form (docs/api.md#forms-read-before-the-handler):
   * its JSON decoding then finds nothing, which json() and the routes decoding rawBody themselves answer as such
   */
  formTaken: boolean;
  /** aborts when API_MAX_REQUEST_DURATION passes (the 504): pass it to tx() and the hasher */
  signal: AbortSignal;
  /** milliseconds before API_MAX_REQUEST_DURATION answers 504 (Infinity before its clock starts): bounds outbound calls (request-budget.ts) */
  msLeft(): number;
  /**
   * The parsed JSON body ({} when empty), unchecked but with its members named as the route's fields
   * (field-names.ts). Throws 400 bad_json when it does not parse, or is no object: then in the words of the
   * original's decoder, naming `goParams`, the Go type it decodes into at this read, by default the
   * route's (go-param-types.ts).
   */
  json(goParams?: string): JsonObject;
  /** The body checked by the route's schema (validate.ts), typed; json() when the route has none. */
  body(): B;
  /** Notes an audit entry written for this request: the last one is the request line's auth_event (db/audit-log.ts). */
  audited(payload: JsonObject): void;
}

export interface ApiResponse {
  status?: number; // default 200
  headers?: Record<string, string>;
  /** serialised as JSON unless it is a string; undefined → no body */
  body?: unknown;
}

type Reply = Promise<ApiResponse> | ApiResponse;

/** A handler of a route open to anyone (guard 'none'). */
export type Handler<B = JsonObject> = (req: ApiRequest<B>, ctx: AppContext) => Reply;

/** Who a guard lets through: the handler of a guarded route receives it as its third argument. */
export interface Principals {
  /** a valid access token of a live session of a user who is not banned (auth/bearer.ts) */
  user: Authenticated;
  /** the same, with the user's identities read in the same statement (GET /user) */
  'user+identities': AuthenticatedWithIdentities;
  /** the same as user, its session possibly ended by the limits or its not_after (POST /logout) */
  'user-signing-out': Authenticated;
  /** a token whose role is one of JWT_ADMIN_ROLES (auth/admin.ts) */
  admin: Admin;
}

export type GuardedHandler<P, B = JsonObject> = (req: ApiRequest<B>, ctx: AppContext, principal: P) => Reply;

/**
 * A body check made by validate.ts: returns the body typed, or throws the route's 400. `fields` names the
 * fields it reads, so that req.json() matches members to them as the original does (field-names.ts).
 */
export type BodyCheck<B> = ((body: JsonObject) => B) & { readonly fields?: FieldNames };

interface RouteFields {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  path: string; // /admin/users/{user_id}
  /** the per-client bucket taken before anything else (limits/per-client.ts); a function when the request decides it */
  limit?: ClientBucket | BucketChoice;
  /** the captcha check (auth/captcha-guard.ts): true, or a predicate naming the requests exempt from it */
  captcha?: true | ((req: ApiRequest) => boolean);
  /**
   * the captcha is checked before the limit is taken, so a request it refuses costs the client nothing: the
   * original's order on /signup and /token, whose limiters run inside the handler behind its captcha
   * middleware. Without a solved captcha a bot would otherwise spend the shared bucket of the whole proxy
   * address, and /token's bucket is the refresh grant's too.
   */
  captchaFirst?: true;
  /** the body schema, checked when the handler first reads req.body() */
  body?: BodyCheck<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the handler's B, checked in its module
  /** excluded from the per-request log line (the original does not log /health) */
  quiet?: boolean;
  /**
   * a GET that changes something (spends a link, starts or ends a flow, sends a code): HEAD is 405 here, as
   * the original answers HEAD everywhere, rather than the GET it stands for elsewhere (router.ts), so that a
   * mail scanner or a link preview asking HEAD first spends nothing
   */
  changesState?: true;
  /** a feature switch checked before anything else (the original's require…Enabled middleware): throws when off */
  feature?: (ctx: AppContext) => void;
}

/** One line of the route table. `guard` is required: a route nobody decided on does not compile. */
export type Route =
  | (RouteFields & { guard: 'none'; handler: Handler<any> }) // eslint-disable-line @typescript-eslint/no-explicit-any
  | { [G in keyof Principals]: RouteFields & { guard: G; handler: GuardedHandler<Principals[G], any> } }[keyof Principals]; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The bucket a request takes from, decided by the request; null when it takes from none. */
export type BucketChoice = (req: ApiRequest, ctx: AppContext) => ClientBucket | null;

/** A route made runnable by the dispatcher: limit, captcha, guard and schema around the handler. */
export type Run = (req: ApiRequest, ctx: AppContext) => Reply;

/**
 * A path prefix one feature owns whole, as the original's sub-routers with a require…Enabled middleware do:
 * every request under it, whatever its path or method, meets the feature switch before anything else; one
 * the route table does not serve is then answered by the mount's own not-found handler (a path it does not
 * know) or 405 with Allow (a method it does not serve). The table's routes under the prefix carry the same
 * `feature`.
 */
export interface Mount {
  prefix: string; // /scim/v2: the prefix itself and every path below it
  feature: (ctx: AppContext) => void;
  notFound: Handler;
}
