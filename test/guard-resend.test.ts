// The HTTP guard's relay when an HTTP thread closes its connection with a request unanswered
// (docs/http-guard.md#threads-that-go-away): a safe request without a body whose answer had not begun is sent
// to another thread once, as proxies retry such requests; anything else ends the client's connection, since
// it may have run. Threads here are plain TCP servers that either close on the first request or answer it.
import t, { type Test } from 'tap';
import net from 'node:net';
import { relay } from '../dist/server/guard/relay.js';

type Behaviour = 'close' | 'answer' | 'half-answer';

/** A stand-in HTTP thread: records what reaches it, then closes, answers, or starts an answer and closes. */
async function thread(behaviour: Behaviour) {
  const received: string[] = [];
  const server = net.createServer((socket) => {
    let seen = '';
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      received.push(seen.slice(seen.search(/(GET|POST) \//))); // after the PROXY header the relay sends first
      if (behaviour === 'close') socket.destroy();
      else if (behaviour === 'half-answer') socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      seen = '';
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, received, close: () => server.close() };
}

/** A guard whose threads are tried in the order given; the client's raw socket, and what it read. */
async function throughRelay(t: Test, behaviours: Behaviour[]) {
  const threads = await Promise.all(behaviours.map(thread));
  let next = 0;
  const front = net.createServer((client) =>
    relay(client, {
      headTimeoutMs: 5_000,
      bodyIdleMs: 4_000,
      keepAliveMs: 60_000,
      upstreamIdleMs: 60_000,
      lingerMs: 200,
      connectUpstream: () => {
        const picked = threads[next];
        if (!picked) return null;
        next++;
        return { socket: net.connect(picked.port, '127.0.0.1'), id: String(next) };
      },
      refused: () => {},
    }),
  );
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const client = net.connect((front.address() as net.AddressInfo).port, '127.0.0.1');
  let read = '';
  client.on('data', (chunk) => (read += chunk.toString('latin1')));
  const ended = new Promise<void>((resolve) => client.once('close', () => resolve()));
  client.on('error', () => {});
  t.teardown(() => {
    client.destroy();
    front.close();
    for (const th of threads) th.close();
  });
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  };
  return { threads, client, read: () => read, ended, until };
}

const GET = 'GET /settings HTTP/1.1\r\nHost: a\r\n\r\n';

t.test('a GET whose thread closed before answering is answered by the next thread', async (t) => {
  const r = await throughRelay(t, ['close', 'answer']);
  r.client.write(GET);
  await r.until(() => r.read().includes('ok'));
  t.match(r.read(), /^HTTP\/1\.1 200 OK\r\n[\s\S]*ok$/);
  t.strictSame(
    r.threads.map((th) => th.received.length),
    [1, 1],
    'the first thread saw it and closed; the second answered it',
  );
  t.equal(r.threads[1].received[0], GET, 'the same request, byte for byte');
  r.client.write(GET);
  await r.until(() => r.read().split('ok').length > 2);
  t.equal(r.threads[1].received.length, 2, 'the connection goes on with the new thread');
});

t.test('a POST is never sent twice: its thread closed before answering, so the client connection ends', async (t) => {
  const r = await throughRelay(t, ['close', 'answer']);
  r.client.write('POST /token HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}');
  await r.ended;
  t.equal(r.read(), '', 'no answer');
  t.equal(r.threads[0].received.length, 1, 'the first thread saw it and closed');
  t.equal(r.threads[1].received.length, 0, 'the next thread never saw it');
});

t.test('a GET is sent again once only: a second thread that closes too ends the client connection', async (t) => {
  const r = await throughRelay(t, ['close', 'close', 'answer']);
  r.client.write(GET);
  await r.ended;
  t.equal(r.read(), '');
  t.strictSame(
    r.threads.map((th) => th.received.length),
    [1, 1, 0],
  );
});

t.test('a GET whose answer had begun is not sent again: the client gets what came, then the end', async (t) => {
  const r = await throughRelay(t, ['half-answer', 'answer']);
  r.client.write(GET);
  await r.ended;
  t.match(r.read(), /^HTTP\/1\.1 200 OK\r\nContent-Length: 10\r\n\r\nabc$/);
  t.equal(r.threads[1].received.length, 0);
});
