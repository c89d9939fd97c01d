// Outbound HTTP to identity providers: every call is bounded by INTERNAL_HTTP_TIMEOUT and never follows a
// redirect (a token or user endpoint that redirects is misconfigured, and following it could leak the
// code or token elsewhere). Failures become ProviderError, which the flow maps to the original's errors.
import type { ProviderFetch } from './types.js';

export class ProviderError extends Error {
  /** The provider's HTTP status, when it answered at all. */
  readonly status: number | undefined;
  constructor(message: string, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProviderError';
    this.status = status;
  }
}

export function boundedFetch(timeoutSeconds: number): ProviderFetch {
  return async (url, init) => {
    const where = new URL(url);
    let response: Response;
    try {
      response = await fetch(where, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutSeconds * 1000) });
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new ProviderError(timedOut ? `${where.host} did not answer within ${timeoutSeconds} s` : `${where.host} unreachable`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ProviderError(`${where.host}${where.pathname} answered ${response.status}`, response.status);
    }
    return response;
  };
}

/** Reads a JSON object answer; anything else is a ProviderError naming where it came from. */
export async function jsonObject(response: Response): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ProviderError(`${new URL(response.url).host} answered something other than JSON`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ProviderError(`${new URL(response.url).host} answered JSON that is not an object`);
  }
  return body as Record<string, unknown>;
}

/** Reads a JSON array answer (GitHub's /user/emails); anything else is a ProviderError. */
export async function jsonArray(response: Response): Promise<unknown[]> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ProviderError(`${new URL(response.url).host} answered something other than JSON`);
  }
  if (!Array.isArray(body)) throw new ProviderError(`${new URL(response.url).host} answered JSON that is not a list`);
  return body as unknown[];
}
