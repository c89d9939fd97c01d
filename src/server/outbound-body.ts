// Reading the body of an answer from a server we called (hook, template server, identity provider, SMS
// gateway, captcha verifier, leaked-password API). None of them is trusted to keep its answer small:
// Content-Length may be absent (chunked) or lie, so the cap is enforced on the bytes as they arrive, and
// the rest of an answer over the cap is never read (leaving the loop by throwing cancels the stream).

/** The body as one Buffer, or `tooLarge()` thrown as soon as more than `maxBytes` arrived. */
export async function readCapped(response: Response, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** The body as UTF-8 text, capped as readCapped. */
export async function readCappedText(response: Response, maxBytes: number, tooLarge: () => Error): Promise<string> {
  return (await readCapped(response, maxBytes, tooLarge)).toString('utf8');
}

/** The body parsed as JSON, capped as readCapped; `undefined` when it is not JSON. */
export async function readCappedJson(response: Response, maxBytes: number, tooLarge: () => Error): Promise<unknown> {
  const text = await readCappedText(response, maxBytes, tooLarge);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
