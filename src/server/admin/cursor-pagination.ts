// Cursor (keyset) pagination of GET /admin/users, the original's experimental mode (docs/api.md#get-adminusers).
// Taken only when EXPERIMENTAL_CURSOR_PAGINATION_ENABLED is on and the request names no `page` and no
// `per_page` (an empty value counts as none, so auth-js's listUsers() without arguments lands here, as it
// does with the original); page-number clients keep their X-Total-Count.
//
// The cursor is base64url without padding of the JSON {"created_at": RFC 3339 time, "id": uuid} of the last
// row of the previous page. It is not signed, as in the original: a forged one only moves the starting
// point within the audience the admin may list anyway. Decoding follows what the original accepts (field
// names in any case, a null field counts as absent); refusals are 400 validation_failed with the original's
// "Bad Pagination Parameters: " prefix.
import { apiError, type ApiError } from '../errors.js';
import { queryLink } from './pagination.js';
import type { UserKey } from '../../db/users.js';
import type { ApiRequest } from '../http/types.js';

export interface CursorParams {
  limit: number;
  after: UserKey | null;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;
const UINT64_MAX = 18446744073709551615n;
const BASE64URL = /^[A-Za-z0-9_-]$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
// Go's zero time (0001-01-01T00:00:00Z), which the original refuses as "missing": what a cursor without created_at decodes to.
const ZERO_TIME_MS = new Date(0).setUTCFullYear(1, 0, 1);

const bad = (detail: string): ApiError => apiError('admin_pagination', `Bad Pagination Parameters: ${detail}`);

export function useCursorPagination(enabled: boolean, query: URLSearchParams): boolean {
  return enabled && !query.get('page') && !query.get('per_page');
}

export function parseCursorParams(query: URLSearchParams): CursorParams {
  const text = query.get('limit');
  let limit = DEFAULT_LIMIT;
  if (text) {
    // Go's strconv.ParseUint wording; any size it accepts is then capped.
    if (!/^\d+$/.test(text)) throw bad(`strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`);
    if (BigInt(text) > UINT64_MAX) throw bad(`strconv.ParseUint: parsing ${JSON.stringify(text)}: value out of range`);
    if (BigInt(text) === 0n) throw bad('limit must be greater than 0');
    limit = Math.min(Number(text), MAX_LIMIT);
  }
  const cursor = query.get('cursor');
  return { limit, after: cursor ? decodeCursor(cursor) : null };
}

/** The key's time is already Go's RFC3339Nano rendering (listUsersAfter), as the original's cursor has it. */
export function encodeCursor(key: UserKey): string {
  return Buffer.from(JSON.stringify({ created_at: key.createdAt, id: key.id })).toString('base64url');
}

export function decodeCursor(text: string): UserKey {
  const json = decodeBase64Url(text).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw bad('invalid cursor: not JSON');
  }
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) throw bad('invalid cursor: not a JSON object');
  let createdAt: { text: string; zero: boolean } | null = null;
  let id: string | null = null;
  for (const [key, field] of Object.entries(value ?? {})) {
    const name = key.toLowerCase();
    if (field === null || (name !== 'created_at' && name !== 'id')) continue;
    if (typeof field !== 'string') throw bad(`invalid cursor: ${name} is not a string`);
    if (name === 'created_at') createdAt = parseTime(field);
    else id = parseUuid(field);
  }
  if (id === null || id === NIL_UUID) throw bad('invalid cursor: missing id');
  if (createdAt === null || createdAt.zero) throw bad('invalid cursor: missing created_at');
  return { createdAt: createdAt.text, id };
}

/** The Link header of a page that has a next one: the request's own query with `page` dropped and `cursor` set. */
export function cursorLinkHeader(req: ApiRequest, next: string): Record<string, string> {
  const query = new URLSearchParams(req.query);
  query.delete('page');
  query.set('cursor', next);
  return { Link: `${queryLink(req, query)}; rel="next"` };
}

// Go's base64.RawURLEncoding: no padding, line breaks skipped; the error names the first bad byte's offset.
function decodeBase64Url(text: string): Buffer {
  const chars = [...text];
  let offset = 0;
  let count = 0;
  for (const c of chars) {
    if (c !== '\r' && c !== '\n') {
      if (!BASE64URL.test(c)) throw bad(`invalid cursor encoding: illegal base64 data at input byte ${offset}`);
      count++;
    }
    offset += Buffer.byteLength(c);
  }
  if (count % 4 === 1) throw bad(`invalid cursor encoding: illegal base64 data at input byte ${offset - 1}`);
  return Buffer.from(text.replace(/[\r\n]/g, ''), 'base64url');
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 time, as UTC text PostgreSQL reads without regard to its session's time zone. Checked
 * field by field here so that no cursor can make the statement fail; years outside 1-9999 are refused
 * (the service never writes them).
 */
function parseTime(text: string): { text: string; zero: boolean } {
  const m = TIME.exec(text);
  const invalid = () => bad(`invalid cursor: created_at ${JSON.stringify(text)} is not an RFC 3339 time`);
  if (!m) throw invalid();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const fraction = m[7] ?? '';
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) : 0;
  if (hour > 23 || minute > 59 || second > 59 || Number(m[9] ?? 0) > 23 || Number(m[10] ?? 0) > 59) throw invalid();
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) throw invalid();
  date.setUTCHours(hour, minute - offset, second, 0);
  const utcYear = date.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) throw invalid();
  const zero = date.getTime() === ZERO_TIME_MS && !/[1-9]/.test(fraction);
  return { text: date.toISOString().replace(/\.000Z$/, fraction ? `.${fraction}Z` : 'Z'), zero };
}

/** The forms Go's uuid package reads: canonical, 32 bare hex digits, {canonical}, urn:uuid:canonical. */
function parseUuid(text: string): string {
  let body = text;
  if (body.startsWith('urn:uuid:')) body = body.slice('urn:uuid:'.length);
  else if (body.startsWith('{') && body.endsWith('}')) body = body.slice(1, -1);
  const canonical = /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(body);
  if (!canonical && !(body === text && /^[0-9a-f]{32}$/i.test(body))) throw bad(`invalid cursor: id ${JSON.stringify(text)} is not a UUID`);
  const hex = body.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
