// Oversized bodies at the socket level: a client that sends a body over 1 MiB in one go (no Expect:
// 100-continue, declared or chunked) reads the whole 413 JSON answer, and the connection stays usable.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { answers, bodyText, exchange as rawExchange } from './helpers/raw-http.js';

const api = await startTestService();
t.teardown(() => api.stop());
const port = Number(new URL(api.url).port);

const exchange = (bytes: Buffer, complete: (received: string) => boolean) => rawExchange(port, [bytes], complete, { timeoutMs: 20_000 });
const bodyOf = bodyText;

t.test('a 1.5 MiB body sent whole: the client reads the 413 JSON, then the connection answers again', async (t) => {
  const body = Buffer.alloc(1.5 * 1024 * 1024, 'x');
  const head = `POST /signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const next = 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n';
  const { received, error } = await exchange(
    Buffer.concat([Buffer.from(head), body, Buffer.from(next)]),
    (r) => answers(r).length >= 2 && r.endsWith('}'),
  );
  t.equal(error, null, 'no reset before both answers arrived');
  const [refused, health] = answers(received);
  t.match(refused, /^HTTP\/1\.1 413 /);
  t.strictSame(JSON.parse(bodyOf(refused)), {
    code: 413,
    error_code: 'request_entity_too_large',
    msg: 'Request body too large (max 1048576 bytes)',
  });
  t.match(health, /^HTTP\/1\.1 200 /, 'the same connection serves the next request');
});

t.test('a body over 1 MiB without a declared length (chunked) is refused the same way', async (t) => {
  const piece = Buffer.alloc(256 * 1024, 'y');
  const chunks = Array.from({ length: 6 }, () =>
    Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]),
  );
  const head = 'POST /signup HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
  const { received, error } = await exchange(Buffer.concat([Buffer.from(head), ...chunks, Buffer.from('0\r\n\r\n')]), (r) =>
    r.includes('}'),
  );
  t.equal(error, null, 'no reset before the answer arrived');
  t.match(received, /^HTTP\/1\.1 413 /);
  t.equal(JSON.parse(bodyOf(received)).error_code, 'request_entity_too_large');
});
