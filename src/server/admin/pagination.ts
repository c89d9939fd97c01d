// Page-number pagination of admin lists (docs/api.md#get-adminusers, the original's pagination.go and sorting.go):
// `page` (default 1) and `per_page` (default 50), `sort=created_at asc|desc`, and the X-Total-Count and
// Link headers. Link targets are the request's own relative path and query with `page` replaced, the
// query keys sorted as Go's url.Values.Encode sorts them.
import { apiError } from '../errors.js';
import { goQueryEscape } from '../http/go-url.js';
import type { ApiRequest } from '../http/types.js';

export interface PageParams {
  /** The page served, from 1. */
  page: number;
  /** The rows a page holds, as served. */
  perPage: number;
  /** The page as asked for: the Link header counts from it, so `page=0` links to page 1 as the next, as the original does. */
  askedPage: number;
  /** `per_page` as asked for: the Link header's page count divides by it, as the original's does. */
  askedPerPage: number;
}

const DEFAULT_PER_PAGE = 50;
const UINT64_MAX = 2n ** 64n - 1n;
const INT64_MAX = 2n ** 63n - 1n;
/** What the original's database layer (pop's paginator) pages by when handed a page or page size below 1. */
const PAGINATOR_FALLBACK = { page: 1, perPage: 20 };

function whole(text: string | null, fallback: number): bigint {
  if (text === null || text === '') return BigInt(fallback);
  // Go's strconv.ParseUint messages: digits only, and at most 2^64 - 1.
  const why = !/^\d+$/.test(text) ? 'invalid syntax' : BigInt(text) > UINT64_MAX ? 'value out of range' : null;
  if (why) throw apiError('admin_pagination', `Bad Pagination Parameters: strconv.ParseUint: parsing ${JSON.stringify(text)}: ${why}`);
  return BigInt(text);
}

/** Held at 2^53 - 1: no table comes near that many rows, so neither the Link header nor reachablePage needs more. */
const asNumber = (value: bigint) => (value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value));

/**
 * The value the original's query pages by. It parses a uint64 but hands the database layer a Go int, and
 * 2^63 or more turns negative there, which that layer replaces by its own default (page 1, 20 rows);
 * its Link header still counts with the value asked for.
 */
const served = (value: bigint, fallback: number) => (value > INT64_MAX ? fallback : asNumber(value));

export function parsePage(query: URLSearchParams): PageParams {
  const asked = whole(query.get('page'), 1);
  const perPageAsked = whole(query.get('per_page'), DEFAULT_PER_PAGE);
  // The original divides by per_page for its Link header and fails with a server error on 0; a 400 says why.
  if (perPageAsked < 1n) throw apiError('admin_pagination', 'Bad Pagination Parameters: per_page must be at least 1');
  // As the original's paginator: page 0 serves page 1 (and the empty list's own rel="last" link says page=0).
  const page = Math.max(served(asked, PAGINATOR_FALLBACK.page), 1);
  const perPage = served(perPageAsked, PAGINATOR_FALLBACK.perPage);
  return { page: reachablePage(page, perPage), perPage, askedPage: asNumber(asked), askedPerPage: asNumber(perPageAsked) };
}

/**
 * A page so deep that its row offset is past any table is served as an empty page, as the original serves
 * it (its Link header still counts from the page asked for). Held at the first page that starts 2^52 rows
 * in or further, which no table comes near, so that the row offset stays an exact integer for the database.
 */
function reachablePage(page: number, perPage: number): number {
  return Math.min(page, Math.floor(Number.MAX_SAFE_INTEGER / perPage) + 1);
}

/**
 * true for ascending; only created_at may be sorted on, newest first by default. As the original: each value
 * is the field, then everything after the first space is the direction; every value is checked, and the
 * first one orders (a later one only breaks its ties, and created_at has none that matter).
 */
export function parseCreatedAtSort(query: URLSearchParams): boolean {
  let ascending: boolean | undefined;
  for (const value of query.getAll('sort')) {
    const space = value.indexOf(' ');
    const field = space === -1 ? value : value.slice(0, space);
    if (field !== 'created_at') throw apiError('admin_sort', `Bad Sort Parameters: bad field for sort '${field}'`);
    const direction = space === -1 ? 'DESC' : value.slice(space + 1);
    const dir = direction.toUpperCase();
    if (dir !== 'ASC' && dir !== 'DESC') {
      throw apiError('admin_sort', `Bad Sort Parameters: bad direction for sort '${direction}', only 'asc' and 'desc' allowed`);
    }
    ascending ??= dir === 'ASC';
  }
  return ascending ?? false;
}

/** `<path?query>` for a Link header: the request's path with this query, encoded as Go's url.Values.Encode does. */
export function queryLink(req: ApiRequest, query: URLSearchParams): string {
  const keys = [...new Set(query.keys())].sort();
  const encoded = keys.flatMap((k) => query.getAll(k).map((v) => `${goQueryEscape(k)}=${goQueryEscape(v)}`)).join('&');
  return `<${req.path}?${encoded}>`;
}

export function paginationHeaders(req: ApiRequest, p: PageParams, total: number): Record<string, string> {
  const totalPages = Math.ceil(total / p.askedPerPage);
  const link = (page: number) => {
    const query = new URLSearchParams(req.query);
    query.set('page', String(page));
    return queryLink(req, query);
  };
  const parts: string[] = [];
  if (totalPages > p.askedPage) parts.push(`${link(p.askedPage + 1)}; rel="next"`);
  parts.push(`${link(totalPages)}; rel="last"`);
  return { 'X-Total-Count': String(total), Link: parts.join(', ') };
}
