// The bench's load phases (bench/lib/load.mjs) measure something even on a machine too busy to answer
// within a phase: a phase that answered nothing runs again for longer. Here the server itself is slow, so
// the first one-second phase cannot get an answer whatever the machine does.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const { load } = await import(new URL('../bench/lib/load.mjs', import.meta.url).href);

/** A server answering every request `delayMs` after it arrived, or with `status` at once. */
async function server(answer: { delayMs: number; status?: number } | ((n: number) => { delayMs: number; status?: number })) {
  let n = 0;
  const s = http.createServer((_req, res) => {
    const { delayMs, status = 200 } = typeof answer === 'function' ? answer(n++) : answer;
    setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end('{}'), delayMs);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => s.close(() => resolve())));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
}

t.test('a phase whose answers all come after it has ended runs again for longer, and measures them', async (t) => {
  const url = await server({ delayMs: 1500 });
  const row = await load({ url, duration: 1, connections: 2, progress: false });
  t.ok(row.requests > 0, `${row.requests} answers measured`);
  t.ok(row.seconds >= 2, `the phase that measured them ran ${row.seconds} s, not the 1 s asked for`);
  t.equal(row.non2xx, 0);
});

t.test('a phase that answers keeps the duration asked for', async (t) => {
  const url = await server({ delayMs: 0 });
  const row = await load({ url, duration: 1, connections: 2, progress: false });
  t.ok(row.requests > 0);
  t.ok(row.seconds < 2, `${row.seconds} s`);
});

t.test('what counts as enough is the caller’s: refusals at once do not end the overload phase before a login is accepted', async (t) => {
  // Every fourth request is accepted, 1.5 s later; the rest are refused at once.
  const url = await server((n) => (n % 4 === 0 ? { delayMs: 1500 } : { delayMs: 0, status: 503 }));
  const enough = (row: any) => (row.byStatus['200']?.count ?? 0) > 0;
  const row = await load({ url, duration: 1, connections: 4, progress: false, enough });
  t.ok(row.statuses['200'] > 0 && row.statuses['503'] > 0, JSON.stringify(row.statuses));
  t.ok(row.seconds >= 2, `${row.seconds} s`);
});
