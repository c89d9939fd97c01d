// The HTTP guard's relay between requests (docs/http-guard.md#kept-alive-connections): a connection that has
// had an answer stays open while quiet, as the original keeps it, until the keep-alive limit; one that never
// sent a request goes at the head timeout; and a connection to a thread left quiet is replaced before the
// next request rather than written into as the thread closes it. Threads here are plain TCP servers; the
// relay's limits are scaled down (head timeout 300 ms, keep-alive 1.2 s, thread connections 200 ms).
import t, { type Test } from 'tap';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { relay } from '../dist/server/guard/relay.js';

const HEAD_TIMEOUT_MS = 300;
const KEEP_ALIVE_MS = 1_200;
const UPSTREAM_IDLE_MS = 200;

interface ThreadOptions {
  /** answers a connection's second request by closing it unanswered, as uWS's idle close crossing it would */
  closesOnSecond?: boolean;
  /** waits this long before each answer */
  answerAfterMs?: number;
}

/** A stand-in HTTP thread: answers each request `ok`, counting the connections it was given. */
async function thread(options: ThreadOptions = {}) {
  const connections: net.Socket[] = [];
  const server = net.createServer((socket) => {
    connections.push(socket);
    let seen = '';
    let requests = 0;
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      while (seen.includes('\r\n\r\n')) {
        const end = seen.indexOf('\r\n\r\n') + 4;
        const length = Number(/content-length: (\d+)/i.exec(seen.slice(0, end))?.[1] ?? 0);
        if (seen.length < end + length) return;
        seen = seen.slice(end + length);
        requests++;
        if (options.closesOnSecond && requests === 2) return void socket.destroy();
        const answer = () => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        if (options.answerAfterMs) setTimeout(answer, options.answerAfterMs);
        else answer();
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, connections, close: () => server.close() };
}

async function throughRelay(t: Test, options: ThreadOptions = {}, limits: { keepAliveMs?: number; upstreamIdleMs?: number } = {}) {
  const th = await thread(options);
  const front = net.createServer((client) =>
    relay(client, {
      headTimeoutMs: HEAD_TIMEOUT_MS,
      bodyIdleMs: 250,
      keepAliveMs: limits.keepAliveMs ?? KEEP_ALIVE_MS,
      upstreamIdleMs: limits.upstreamIdleMs ?? UPSTREAM_IDLE_MS,
      lingerMs: 100,
      connectUpstream: () => ({ socket: net.connect(th.port, '127.0.0.1'), id: 'one' }),
      refused: () => {},
    }),
  );
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const client = net.connect((front.address() as net.AddressInfo).port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  let read = '';
  let closedAt = 0;
  client.on('data', (chunk) => (read += chunk.toString('latin1')));
  client.on('close', () => (closedAt = Date.now()));
  client.on('error', () => {});
  t.teardown(() => {
    client.destroy();
    front.close();
    th.close();
  });
  const answers = () => read.split('ok').length - 1;
  const answered = async (count: number) => {
    for (let i = 0; i < 500 && answers() < count && !closedAt; i++) await sleep(10);
    return answers() >= count;
  };
  return { th, client, answers, answered, closedAt: () => closedAt };
}

const POST = 'POST /token HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}';

t.test('a served connection stays open while quiet past the head timeout, and closes once quiet for the keep-alive limit', async (t) => {
  const r = await throughRelay(t);
  r.client.write(POST);
  t.ok(await r.answered(1));
  const servedAt = Date.now();
  await sleep(HEAD_TIMEOUT_MS * 3);
  t.equal(r.closedAt(), 0, 'still open after three head timeouts');
  r.client.write(POST);
  t.ok(await r.answered(2), 'and its next POST is answered');
  const againAt = Date.now();
  for (let i = 0; i < 400 && !r.closedAt(); i++) await sleep(10);
  t.ok(r.closedAt() > 0, 'closed in the end');
  t.ok(r.closedAt() - againAt >= KEEP_ALIVE_MS - HEAD_TIMEOUT_MS, 'not before it was quiet for the keep-alive limit');
  t.ok(againAt - servedAt >= HEAD_TIMEOUT_MS * 3);
});

t.test('a connection that never sends a request is closed at the head timeout', async (t) => {
  const r = await throughRelay(t, {}, { keepAliveMs: 600_000 });
  for (let i = 0; i < 400 && !r.closedAt(); i++) await sleep(10);
  t.ok(r.closedAt() > 0, 'closed, the keep-alive allowance not given');
});

t.test('after an answer slower than the head timeout, a quiet connection is still closed at the keep-alive limit', async (t) => {
  const r = await throughRelay(t, { answerAfterMs: HEAD_TIMEOUT_MS * 2 });
  r.client.write(POST);
  t.ok(await r.answered(1), 'the slow answer came, the connection open meanwhile');
  for (let i = 0; i < 400 && !r.closedAt(); i++) await sleep(10);
  t.ok(r.closedAt() > 0, 'then closed once quiet: the timer still watches after it found an answer awaited');
});

t.test('a thread connection left quiet is replaced before the next request, never written into as it closes', async (t) => {
  // The thread drops each connection's second request unanswered. A POST written there is lost (the relay
  // cannot send it again), so the relay must take a fresh connection once the old one has been quiet.
  const r = await throughRelay(t, { closesOnSecond: true });
  r.client.write(POST);
  t.ok(await r.answered(1));
  await sleep(UPSTREAM_IDLE_MS * 2);
  r.client.write(POST);
  t.ok(await r.answered(2), 'the second POST is answered');
  t.equal(r.closedAt(), 0, 'the client keeps its connection');
  t.equal(r.th.connections.length, 2, 'on a fresh connection to the thread');
  t.ok(r.th.connections[0].destroyed || r.th.connections[0].readableEnded, 'the quiet one was closed by the relay');
});

t.test('requests close together share one thread connection', async (t) => {
  const r = await throughRelay(t, {}, { upstreamIdleMs: 600_000 });
  r.client.write(POST);
  t.ok(await r.answered(1));
  r.client.write(POST);
  t.ok(await r.answered(2));
  t.equal(r.th.connections.length, 1);
});
