// Mail templates fetched from MAILER_TEMPLATES_X URLs, with the original service's limits (docs/one-time-codes-and-mail.md#templates
// 7.3): GET, 10 s timeout, status must be 200, at most 1,000,000 bytes, kept 10 minutes, a failed
// (re)load retried after 10 s; the last three are its MAILER_TEMPLATE_MAX_SIZE, _MAX_AGE and _RETRY_INTERVAL. A failed reload keeps the previous copy; with no copy at all the caller
// uses the built-in default (get() returns null).
// One difference, on purpose: a stale copy is served while its reload runs in the background, so a
// slow template server never holds up the request that happens to hit the expiry.
import type { Logger } from 'pino';
import { readCapped } from '../../outbound-body.js';
import { checkGoTemplate } from './go-template.js';

export const TEMPLATE_MAX_BYTES = 1_000_000;
export const TEMPLATE_MAX_AGE_MS = 10 * 60 * 1000;
export const TEMPLATE_RETRY_AFTER_MS = 10 * 1000;
export const TEMPLATE_FETCH_TIMEOUT_MS = 10 * 1000;

interface Entry {
  body: string | null;
  freshUntil: number;
  loading: Promise<void> | null;
}

export interface TemplateCacheOptions {
  siteUrl: string;
  log: Logger;
  /** the largest template read, in bytes; default TEMPLATE_MAX_BYTES */
  maxBytes?: number;
  /** how long a fetched template is used before it is fetched again; default TEMPLATE_MAX_AGE_MS */
  maxAgeMs?: number;
  /** how long after a failed fetch the next is tried; default TEMPLATE_RETRY_AFTER_MS */
  retryAfterMs?: number;
  /** clock in ms, injectable so tests can move past the expiry without waiting */
  now?: () => number;
}

export class TemplateCache {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: TemplateCacheOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The template at `location` (a URL, or a path under SITE_URL), or null: use the default. */
  async get(location: string): Promise<string | null> {
    const url = resolveTemplateUrl(location, this.options.siteUrl);
    let entry = this.entries.get(url);
    if (!entry) this.entries.set(url, (entry = { body: null, freshUntil: 0, loading: null }));
    if (this.now() < entry.freshUntil) return entry.body;
    entry.loading ??= this.reload(url, entry);
    if (entry.body === null) await entry.loading;
    return entry.body;
  }

  /** Resolves once no load is in flight (shutdown, and tests that look at a background reload). */
  async idle(): Promise<void> {
    await Promise.all([...this.entries.values()].flatMap((entry) => (entry.loading ? [entry.loading] : [])));
  }

  private async reload(url: string, entry: Entry): Promise<void> {
    try {
      const body = await fetchTemplate(url, this.options.maxBytes ?? TEMPLATE_MAX_BYTES);
      // One that does not parse counts as not fetched, as in the original: the previous copy or the default stays.
      checkGoTemplate(body);
      entry.body = body;
      entry.freshUntil = this.now() + (this.options.maxAgeMs ?? TEMPLATE_MAX_AGE_MS);
    } catch (err) {
      entry.freshUntil = this.now() + (this.options.retryAfterMs ?? TEMPLATE_RETRY_AFTER_MS);
      this.options.log.warn(
        { url, err: (err as Error).message, keptPreviousCopy: entry.body !== null },
        'mail template could not be fetched; using the %s',
        entry.body === null ? 'built-in default' : 'previous copy',
      );
    } finally {
      entry.loading = null;
    }
  }
}

/** A value not starting with `http` is taken as relative to SITE_URL, as the original does. */
export function resolveTemplateUrl(location: string, siteUrl: string): string {
  if (location.startsWith('http')) return location;
  return `${siteUrl.replace(/\/+$/, '')}/${location.replace(/^\/+/, '')}`;
}

async function fetchTemplate(url: string, maxBytes: number): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(TEMPLATE_FETCH_TIMEOUT_MS) });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`template server answered ${response.status}`);
  }
  const body = await readCapped(response, maxBytes, () => new Error(`template is larger than ${maxBytes} bytes`));
  // TextDecoder drops a leading byte-order mark, which an editor may have saved into the template.
  return new TextDecoder().decode(body);
}
