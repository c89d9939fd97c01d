// HTTP_MAX_CONNECTIONS (docs/http-guard.md#connection-limit): the guard holds at most that many client
// connections. At the limit the oldest one quiet between requests is closed to make room, as its keep-alive
// timer would have closed it later; when every connection is in the middle of a request, a new one is
// answered 503 over_capacity with Retry-After and closed, never left hanging or reset. Against the service,
// over raw sockets (fetch's own pooled connections would count against the limit too).
import t from 'tap';
import net from 'node:net';
import { once } from 'node:events';
import { startTestService } from './helpers/server.js';

const LIMIT = 3;
const api = await startTestService({ AUTH_HTTP_MAX_CONNECTIONS: String(LIMIT) });
t.teardown(() => api.stop());
const { port } = new URL(api.url);

interface Connection {
  socket: net.Socket;
  /** everything the service wrote so far */
  received(): string;
  /** resolves once the service closed its side */
  ended: Promise<void>;
}

async function connect(to = Number(port)): Promise<Connection> {
  const socket = net.connect(to, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => {});
  const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
  return { socket, received: () => text, ended };
}

/** Sends one GET and waits for its whole answer (heads and bodies of answers before it included). */
async function get(connection: Connection, path: string): Promise<string> {
  const before = connection.received().length;
  connection.socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  for (;;) {
    const answer = connection.received().slice(before);
    const head = answer.indexOf('\r\n\r\n');
    const length = Number(/content-length: (\d+)/i.exec(answer)?.[1] ?? NaN);
    if (head >= 0 && answer.length >= head + 4 + length) return answer;
    await once(connection.socket, 'data');
  }
}

const SLOW_BODY_BYTES = 64;

/**
 * Puts the connection in the middle of a request whose body is still arriving. A GET goes first in the same
 * write: its answer coming back shows the guard has read the POST's head behind it.
 */
async function startSlowRequest(connection: Connection): Promise<void> {
  const before = connection.received().length;
  connection.socket.write(
    'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n' +
      `POST /token?grant_type=password HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${SLOW_BODY_BYTES}\r\n\r\n{`,
  );
  while (!/\r\n\r\n\{.*\}$/s.test(connection.received().slice(before))) await once(connection.socket, 'data');
}

t.test('at the limit, the oldest quiet connection makes room for a new one', async (t) => {
  const held = [await connect(), await connect(), await connect()];
  for (const connection of held) t.match(await get(connection, '/health'), /^HTTP\/1\.1 200 /, 'each is served and kept alive');
  const fourth = await connect();
  t.match(await get(fourth, '/health'), /^HTTP\/1\.1 200 /, 'a fourth connection is served');
  await held[0].ended;
  t.pass('the oldest quiet one was closed for it');
  for (const connection of held.slice(1)) {
    t.match(await get(connection, '/health'), /^HTTP\/1\.1 200 /, 'the others stay open and are served');
  }
  for (const connection of [...held, fourth]) connection.socket.destroy();
});

t.test('when every connection is busy, a new one is answered 503 over_capacity and closed', async (t) => {
  // Three connections each in the middle of a request whose body is still arriving.
  const busy = [await connect(), await connect(), await connect()];
  for (const connection of busy) await startSlowRequest(connection);
  // A byte now and then keeps each body arriving, so none is answered 408 while the test runs.
  let bodySent = 1;
  const trickle = setInterval(() => {
    bodySent++;
    for (const connection of busy) connection.socket.write(' ');
  }, 1000);
  t.teardown(() => clearInterval(trickle));
  const answered = busy.map((c) => c.received());
  const refused = await connect();
  refused.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await refused.ended;
  const answer = refused.received();
  t.match(answer, /^HTTP\/1\.1 503 /, '503');
  t.match(answer, /\r\nRetry-After: \d+\r\n/i, 'with Retry-After');
  t.match(answer, /\r\nConnection: close\r\n/i, 'closing the connection');
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  t.match(body, { code: 503, error_code: 'over_capacity' }, 'in the service’s error shape');
  t.strictSame(
    busy.map((c) => c.received()),
    answered,
    'the busy connections were left alone',
  );
  clearInterval(trickle);

  // Their bodies complete: each request is answered, and its connection is quiet again.
  for (const connection of busy) {
    const before = connection.received().length;
    connection.socket.write(`${' '.repeat(SLOW_BODY_BYTES - bodySent - 1)}}`);
    while (!/\r\n\r\n\{.*\}$/s.test(connection.received().slice(before))) await once(connection.socket, 'data');
  }
  const after = await connect();
  t.match(await get(after, '/health'), /^HTTP\/1\.1 200 /, 'then a new connection is served, in the place of a quiet one');
  await busy[0].ended;
  t.pass('the oldest of them');
  for (const connection of busy) connection.socket.destroy();
  after.socket.destroy();
});

t.test('at most 64 connections are looked at for a quiet one; busy ones looked at go to the back', async (t) => {
  const limit = 66;
  const wide = await startTestService({ AUTH_HTTP_MAX_CONNECTIONS: String(limit) });
  t.teardown(() => wide.stop());
  const widePort = Number(new URL(wide.url).port);
  const busy: Connection[] = [];
  for (let i = 0; i < limit - 1; i++) {
    const connection = await connect(widePort);
    await startSlowRequest(connection);
    busy.push(connection);
  }
  const trickle = setInterval(() => busy.forEach((c) => c.socket.write(' ')), 1000);
  t.teardown(() => clearInterval(trickle));
  const quiet = await connect(widePort);
  t.match(await get(quiet, '/health'), /^HTTP\/1\.1 200 /, 'the newest connection is served and quiet');

  const first = await connect(widePort);
  first.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await first.ended;
  t.match(first.received(), /^HTTP\/1\.1 503 /, 'the 64 oldest are busy: the next connection is refused');
  const second = await connect(widePort);
  t.match(await get(second, '/health'), /^HTTP\/1\.1 200 /, 'the next look starts past them and finds the quiet one');
  await quiet.ended;
  t.pass('which was closed to make room');
  clearInterval(trickle);
  for (const connection of [...busy, second]) connection.socket.destroy();
});
