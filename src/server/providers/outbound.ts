// Outbound HTTP to identity providers: every call is bounded by INTERNAL_HTTP_TIMEOUT and never follows a
// redirect (a token or user endpoint that redirects is misconfigured, and following it could leak the
// code or token elsewhere). Failures become ProviderError, which the flow maps to the original's errors.
import { readCappedText } from '../outbound-body.js';
import type { ProviderFetch, RestrictedConnections } from './types.js';

export class ProviderError extends Error {
  /** The provider's HTTP status, when it answered at all. */
  readonly status: number | undefined;
  constructor(message: string, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProviderError';
    this.status = status;
  }
}

/**
 * The provider's OIDC discovery document could not be had (none cached): the original cannot even build
 * the provider then, and answers as for a provider it does not support (routes/oauth.ts, oauth/callback.ts).
 */
export class DiscoveryError extends ProviderError {
  constructor(cause: ProviderError) {
    super(cause.message, cause.status, { cause });
    this.name = 'DiscoveryError';
  }
}

/** `restricted`: connections only to the addresses it allows (custom providers); a refused one is a ProviderError. */
export function boundedFetch(timeoutSeconds: number, restricted?: RestrictedConnections): ProviderFetch {
  return async (url, init) => {
    const where = new URL(url);
    const refused = await restricted?.refused(where);
    if (refused) throw new ProviderError(`${where.host}: ${refused}`);
    // `dispatcher` is Node's fetch's own option (undici), not in the DOM RequestInit type.
    const connections = restricted ? ({ dispatcher: restricted.dispatcher } as RequestInit) : {};
    let response: Response;
    try {
      response = await fetch(where, { ...init, ...connections, redirect: 'manual', signal: AbortSignal.timeout(timeoutSeconds * 1000) });
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const why = addressRefusal(error);
      throw new ProviderError(timedOut ? `${where.host} did not answer within ${timeoutSeconds} s` : (why ?? `${where.host} unreachable`));
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ProviderError(`${where.host}${where.pathname} answered ${response.status}`, response.status);
    }
    return response;
  };
}

/** The refusal of a restricted connection's resolver (public-connections.ts), found in fetch's error causes. */
export function addressRefusal(error: unknown): string | null {
  for (let e = error; e instanceof Error; e = e.cause) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRREFUSED') return e.message;
  }
  return null;
}

/**
 * The most a provider's answer (token, user, discovery, JWKS) may hold. Real ones are a few KiB; the cap
 * keeps a broken or hostile provider from filling the thread's memory with one sign-in.
 */
export const PROVIDER_ANSWER_MAX_BYTES = 1024 * 1024;

/** The answer's text, or a ProviderError once it passes PROVIDER_ANSWER_MAX_BYTES or stops mid-way. */
export async function providerText(response: Response): Promise<string> {
  try {
    return await readCappedText(
      response,
      PROVIDER_ANSWER_MAX_BYTES,
      () => new ProviderError(`${hostOf(response)} answered more than ${PROVIDER_ANSWER_MAX_BYTES} bytes`),
    );
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw new ProviderError(`${hostOf(response)} did not finish its answer`);
  }
}

async function providerJson(response: Response): Promise<unknown> {
  const text = await providerText(response);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(`${hostOf(response)} answered something other than JSON`);
  }
}

/** Reads a JSON object answer; anything else is a ProviderError naming where it came from. */
export async function jsonObject(response: Response): Promise<Record<string, unknown>> {
  const body = await providerJson(response);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ProviderError(`${hostOf(response)} answered JSON that is not an object`);
  }
  return body as Record<string, unknown>;
}

/** Reads a JSON array answer (GitHub's /user/emails, GitLab's emails); anything else is a ProviderError. */
export async function jsonArray(response: Response): Promise<unknown[]> {
  const body = await providerJson(response);
  if (!Array.isArray(body)) throw new ProviderError(`${hostOf(response)} answered JSON that is not a list`);
  return body as unknown[];
}

/** Where an answer came from, for error messages (a Response built by hand has no URL). */
function hostOf(response: Response): string {
  return URL.canParse(response.url) ? new URL(response.url).host : 'the provider';
}
