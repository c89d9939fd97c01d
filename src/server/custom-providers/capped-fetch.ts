// A custom provider's token and userinfo answers are read up to 1 MiB (docs/custom-providers.md#signing-in):
// the URL is an operator's, not a known API, and an answer without end must not fill the thread's memory.
// The body is read here and handed on as a new Response, so the readers of providers/outbound.ts work as before.
import { ProviderError } from '../providers/outbound.js';
import type { ProviderFetch } from '../providers/types.js';

const MAX_ANSWER_BYTES = 1 << 20;

export function cappedFetch(fetch: ProviderFetch): ProviderFetch {
  return async (url, init) => {
    const response = await fetch(url, init);
    const reader = response.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array> | undefined;
      try {
        next = await reader?.read();
      } catch (err) {
        throw new ProviderError(`${new URL(url).host} broke off its answer`, undefined, { cause: err });
      }
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > MAX_ANSWER_BYTES) {
        await reader?.cancel();
        throw new ProviderError(`${new URL(url).host} answered more than ${MAX_ANSWER_BYTES} bytes`);
      }
      chunks.push(next.value);
    }
    const capped = new Response(Buffer.concat(chunks), { status: response.status, headers: response.headers });
    // jsonObject names the host from response.url in its errors.
    Object.defineProperty(capped, 'url', { value: response.url });
    return capped;
  };
}
