// The one reader for answers from servers we call (src/server/outbound-body.ts), against a real HTTP
// server: a small answer is read whole; an answer over the cap is refused whether its Content-Length
// says so or is absent (chunked); and the reader stops reading, so the server sees the hang-up
// long before it could send everything.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { readCapped, readCappedJson } from '../dist/server/outbound-body.js';

interface Served {
  url: string;
  /** bytes the server managed to hand to the socket before the client went away or it finished */
  written: () => number;
  close: () => Promise<void>;
}

type Plan = { declared?: number; chunk: string; total: number };

async function serve(plan: Plan): Promise<Served> {
  let written = 0;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...(plan.declared !== undefined ? { 'content-length': plan.declared } : {}) });
    const chunk = Buffer.from(plan.chunk);
    const more = (): void => {
      while (written < plan.total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end();
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    written: () => written,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const tooLarge = () => new Error('too large');

t.test('an answer within the cap is read whole, byte for byte', async (t) => {
  const served = await serve({ chunk: '["abc",', total: 7 * 1000 });
  t.teardown(served.close);
  const body = await readCapped(await fetch(served.url), 64 * 1024, tooLarge);
  t.equal(body.length, 7000);
  t.equal(body.toString(), '["abc",'.repeat(1000));
});

t.test('an answer whose Content-Length is over the cap is refused before its body is read', async (t) => {
  const served = await serve({ declared: 10 * 1024 * 1024, chunk: 'x'.repeat(1024), total: 10 * 1024 * 1024 });
  t.teardown(served.close);
  await t.rejects(readCapped(await fetch(served.url), 64 * 1024, tooLarge), { message: 'too large' });
});

t.test('a chunked answer with no length: refused once the cap is passed, and the rest is not read', async (t) => {
  const total = 256 * 1024 * 1024;
  const served = await serve({ chunk: 'x'.repeat(64 * 1024), total });
  t.teardown(served.close);
  await t.rejects(readCapped(await fetch(served.url), 1024 * 1024, tooLarge), { message: 'too large' });
  // What the server wrote before the reader gave up fits in socket buffers; it is nowhere near 256 MiB.
  t.ok(served.written() < total / 4, `the server wrote ${served.written()} bytes of ${total}`);
});

t.test('the cap is inclusive: exactly the cap is read, one byte more is refused', async (t) => {
  const exact = await serve({ chunk: 'y'.repeat(1024), total: 4096 });
  t.teardown(exact.close);
  t.equal((await readCapped(await fetch(exact.url), 4096, tooLarge)).length, 4096);
  const over = await serve({ chunk: 'y'.repeat(4097), total: 4097 });
  t.teardown(over.close);
  await t.rejects(readCapped(await fetch(over.url), 4096, tooLarge), { message: 'too large' });
});

t.test('readCappedJson: parsed JSON, or undefined for anything else', async (t) => {
  const json = await serve({ chunk: '{"ok":true}', total: 11 });
  t.teardown(json.close);
  t.same(await readCappedJson(await fetch(json.url), 1024, tooLarge), { ok: true });
  const html = await serve({ chunk: '<html>', total: 6 });
  t.teardown(html.close);
  t.equal(await readCappedJson(await fetch(html.url), 1024, tooLarge), undefined);
});
