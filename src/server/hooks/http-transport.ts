// Calling an HTTP(S) hook (docs/hooks.md#http-endpoints): a POST of the JSON payload signed with Standard Webhooks
// (the standardwebhooks package; one signature per secret, so a receiver can rotate), the original's limits
// and answers. One deadline covers every attempt, so the wait is bounded however the endpoint behaves.
import { randomUUID } from 'node:crypto';
import contentType from 'content-type';
import { Webhook } from 'standardwebhooks';
import { apiError } from '../errors.js';
import { readCapped } from '../outbound-body.js';
import { NO_ANSWER, parseAnswer } from './answer.js';
import { hookErrorOf } from './errors.js';

/** The original's values (internal/hooks/hookshttp): 5 s for the whole call, 3 attempts, 2 s between, 200 KiB answers. */
export const HTTP_HOOK_TIMEOUT_MS = 5000;
export const HTTP_HOOK_ATTEMPTS = 3;
export const HTTP_HOOK_BACKOFF_MS = 2000;
export const HTTP_HOOK_RESPONSE_LIMIT = 200 * 1024;

export interface HttpHookCall {
  url: string;
  secrets: string[];
  /** the Authorization header the hook's URI carried as user info */
  authorization?: string;
  payload: string;
  /** the request's own deadline (API_MAX_REQUEST_DURATION), on top of the hook's */
  signal?: AbortSignal;
}

class Timeout extends Error {}

/** The hook's JSON answer, or NO_ANSWER for 204 No Content; throws the original's ApiErrors. */
export async function callHttpHook(call: HttpHookCall): Promise<unknown> {
  const deadline = AbortSignal.timeout(HTTP_HOOK_TIMEOUT_MS);
  const signal = call.signal ? AbortSignal.any([deadline, call.signal]) : deadline;
  try {
    return await attempts(call, signal);
  } catch (err) {
    if (err instanceof Timeout || (signal.aborted && isAbort(err))) throw apiError('hook_timeout');
    throw err;
  }
}

async function attempts(call: HttpHookCall, signal: AbortSignal): Promise<unknown> {
  for (let attempt = 1; attempt <= HTTP_HOOK_ATTEMPTS; attempt++) {
    let response: Response;
    try {
      response = await fetch(call.url, { method: 'POST', headers: signedHeaders(call), body: call.payload, redirect: 'manual', signal });
    } catch (err) {
      if (signal.aborted) throw new Timeout();
      // Unreachable (refused, reset, DNS): try again after a pause, as the original.
      if (attempt === HTTP_HOOK_ATTEMPTS) throw apiError('hook_timeout_after_retry');
      void err;
      await pause(HTTP_HOOK_BACKOFF_MS, signal);
      continue;
    }
    switch (response.status) {
      case 204:
        await response.body?.cancel();
        return NO_ANSWER;
      case 200:
      case 202:
        return readAnswer(response, signal);
      case 429:
      case 503: {
        const retryAfter = response.headers.get('retry-after');
        await response.body?.cancel();
        // Only an endpoint that says when to come back is tried again; the wait is capped by the backoff.
        if (!retryAfter) throw apiError('hook_failed', 'Service currently unavailable due to hook');
        if (attempt < HTTP_HOOK_ATTEMPTS) await pause(retryAfterMs(retryAfter), signal);
        continue;
      }
      case 400:
        await response.body?.cancel();
        throw apiError('hook_failed', 'Invalid payload sent to hook');
      case 401:
        await response.body?.cancel();
        throw apiError('hook_failed', 'Hook requires authorization token');
      default:
        await response.body?.cancel();
        throw apiError('hook_failed', `Unexpected status code returned from hook: ${response.status}`);
    }
  }
  throw apiError('hook_failed', 'Service currently unavailable due to hook');
}

function signedHeaders(call: HttpHookCall): Record<string, string> {
  const id = randomUUID();
  const now = new Date();
  // The original signs with each v1 secret and lists the signatures comma-and-space separated.
  const signatures = call.secrets.map((secret) => new Webhook(secret.slice('v1,'.length)).sign(id, now, call.payload));
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signatures.join(', '),
    // As the original: no compressed answer, so the response limit counts the bytes the hook sent.
    'accept-encoding': 'identity',
    ...(call.authorization ? { authorization: call.authorization } : {}),
  };
}

async function readAnswer(response: Response, signal: AbortSignal): Promise<unknown> {
  const contentType = firstValue(response.headers.get('content-type'));
  if (!contentType) {
    await response.body?.cancel();
    throw apiError('hook_payload_invalid_content_type');
  }
  const mediaType = parseMediaType(contentType);
  if (mediaType instanceof Error) {
    await response.body?.cancel();
    throw apiError('hook_payload_invalid_content_type', `Invalid Content-Type header: ${mediaType.message}`);
  }
  if (mediaType !== 'application/json') {
    await response.body?.cancel();
    throw apiError('hook_payload_invalid_content_type', `Invalid JSON response. Received content-type: ${contentType}`);
  }
  const body = await readLimited(response, signal);
  // An empty body is not "no output" (that is 204): the original fails to decode it, whatever the hook.
  const answer = parseAnswer(body.toString('utf8'));
  const hookError = hookErrorOf(answer);
  if (hookError) throw hookError;
  return answer;
}

/** The body, or hook_payload_over_size_limit as soon as it passes the limit (the rest is never read). */
async function readLimited(response: Response, signal: AbortSignal): Promise<Buffer> {
  try {
    return await readCapped(response, HTTP_HOOK_RESPONSE_LIMIT, () => apiError('hook_payload_over_size_limit'));
  } catch (err) {
    if (signal.aborted && isAbort(err)) throw new Timeout();
    throw err;
  }
}

/** Retry-After in seconds or as an HTTP date, capped at the backoff so one answer cannot stall the call. */
function retryAfterMs(header: string): number {
  const seconds = /^\d+$/.test(header.trim()) ? Number(header.trim()) * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(seconds) ? Math.min(Math.max(0, seconds), HTTP_HOOK_BACKOFF_MS) : HTTP_HOOK_BACKOFF_MS;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Timeout());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(new Timeout());
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/**
 * The first of a header's values, as the original's Header.Get reads it: fetch joins repeated fields with
 * ", ", and a media type holds no comma outside a quoted string, so the first such comma ends the first
 * field (a hook behind a proxy that adds its own Content-Type is still read by the hook's).
 */
function firstValue(joined: string | null): string | null {
  if (joined === null) return null;
  let quoted = false;
  for (let i = 0; i < joined.length; i++) {
    const c = joined[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) return joined.slice(0, i).trim();
  }
  return joined;
}

/**
 * The lower-cased media type of a Content-Type header, read by the `content-type` package (RFC 9110's
 * grammar), or the reason it does not parse. The original refuses the same malformed headers; at the edges
 * the grammars differ (a trailing ';' is refused here, a parameter repeated with another value accepted),
 * and the reasons are the package's words (docs/differences.md).
 */
function parseMediaType(header: string): string | Error {
  try {
    return contentType.parse(header).type;
  } catch (err) {
    return err as Error;
  }
}
