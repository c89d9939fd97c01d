// Whether a password appears in the Pwned Passwords corpus (docs/passwords.md#leaked-passwords), asked by
// k-anonymity: only the first 5 hex digits of the password's SHA-1 leave the process, and the range API
// answers every leaked hash suffix under that prefix, one `SUFFIX:COUNT` line each. Neither the password,
// its hash nor the prefix is ever logged.
import { createHash } from 'node:crypto';
import type { Config } from '../config/types.js';
import { readCapped } from '../outbound-body.js';
import { PwnedCache } from './pwned-cache.js';

export type HibpSettings = Config['password']['hibp'];

/** The original's client gives the whole exchange 5 s; a slow API costs a request that long and no more. */
export const RANGE_TIMEOUT_MS = 5000;
/** A real answer is about 40 KB (padded, some 1,000 lines); a mirror sending more is broken. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** An uppercase 35-digit suffix and its count; a CRLF or trailing blanks are allowed, anything else is skipped. */
const LINE = /^([0-9A-F]{35}):([0-9]+)\s*$/;

export class PwnedCheckFailed extends Error {}

export interface PwnedPasswords {
  /** true when the password is known leaked; throws PwnedCheckFailed when the API cannot tell in time. */
  isPwned(password: string): Promise<boolean>;
}

export function createPwnedPasswords(settings: HibpSettings): PwnedPasswords {
  const cache = settings.bloom.enabled ? new PwnedCache(settings.bloom) : null;
  const base = settings.url.replace(/\/+$/, '');
  // Concurrent checks under one prefix share one request, as the original's client does.
  const inFlight = new Map<string, Promise<Set<string>>>();

  const leakedSuffixes = (prefix: string): Promise<Set<string>> => {
    let answer = inFlight.get(prefix);
    if (!answer) {
      answer = fetchRange(base, settings.userAgent, prefix)
        .then((leaked) => {
          cache?.add([...leaked].map((suffix) => Buffer.from(prefix + suffix, 'hex')));
          return leaked;
        })
        .finally(() => inFlight.delete(prefix));
      inFlight.set(prefix, answer);
    }
    return answer;
  };

  return {
    async isPwned(password) {
      const digest = createHash('sha1').update(password, 'utf8').digest();
      if (cache?.has(digest)) return true;
      const hex = digest.toString('hex').toUpperCase();
      return (await leakedSuffixes(hex.slice(0, 5))).has(hex.slice(5));
    },
  };
}

/** The suffixes the range API lists under `prefix` with a count above zero (zero marks padding). */
async function fetchRange(base: string, userAgent: string, prefix: string): Promise<Set<string>> {
  let text: string;
  try {
    const res = await fetch(`${base}/range/${prefix}`, {
      // Padding makes every answer about the same size, so its length does not narrow down the prefix.
      headers: { 'user-agent': userAgent, 'add-padding': 'true' },
      signal: AbortSignal.timeout(RANGE_TIMEOUT_MS),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      // The status only: the request's URL carries the prefix.
      throw new PwnedCheckFailed(`the range API answered ${res.status}`);
    }
    text = (
      await readCapped(res, MAX_ANSWER_BYTES, () => new PwnedCheckFailed(`the range API answered more than ${MAX_ANSWER_BYTES} bytes`))
    ).toString('latin1');
  } catch (err) {
    if (err instanceof PwnedCheckFailed) throw err;
    throw new PwnedCheckFailed(`the range API could not be asked: ${(err as Error).message}`, { cause: err });
  }
  const leaked = new Set<string>();
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (match && !/^0+$/.test(match[2])) leaked.add(match[1]);
  }
  return leaked;
}
