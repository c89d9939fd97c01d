// The HTTP guard's byte-level pieces on their own: which bytes a request head may hold, where a chunked
// body ends however it is cut into reads, how answers are counted (interim 100s, HEAD, 204, chunked
// answers), and the PROXY v2 header's bytes for IPv4, IPv6 and an IPv4 client on a dual-stack socket.
// Then the guard switched off: uWS on the public port, and a PROXY header sent by a client is not believed.
import t from 'tap';
import net from 'node:net';
import { ChunkedBody } from '../dist/server/guard/chunked-body.js';
import { ResponseFraming } from '../dist/server/guard/response-framing.js';
import { proxyHeader } from '../dist/server/guard/proxy-header.js';
import { readRequestHead } from '../dist/server/guard/request-head.js';
import { startTestService } from './helpers/server.js';

// Each head ends with the CRLF CRLF that the guard looks for; the reason is what the refusal's msg says.
const HEAD_BYTES: Array<[string, string, string | null]> = [
  ['tab, space and obs-text in a value', 'GET / HTTP/1.1\r\nHost: a\r\nX-A: b\tc d \xe9\xff\r\n\r\n', null],
  ['a lone LF ending a field', 'GET / HTTP/1.1\r\nHost: a\nX-A: b\r\n\r\n', 'lines must end with CRLF'],
  ['a lone CR inside a value', 'GET / HTTP/1.1\r\nHost: a\r\nX-A: b\rc\r\n\r\n', 'lines must end with CRLF'],
  ['a lone CR just before the final CRLF CRLF', 'GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\r\n\r\n', 'lines must end with CRLF'],
  ['CR CR LF', 'GET / HTTP/1.1\r\nHost: a\r\r\nX-A: b\r\n\r\n', 'lines must end with CRLF'],
  ['NUL in a value', 'GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n', 'a header value holds a control character'],
  ['DEL in a value', 'GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x7f\r\n\r\n', 'a header value holds a control character'],
  ['US (0x1f) in a value', 'GET / HTTP/1.1\r\nHost: a\r\nX-A: \x1f\r\n\r\n', 'a header value holds a control character'],
  [
    'a control character before a lone LF: the LF is named',
    'GET / HTTP/1.1\r\nX-A: \x01\r\nHost: a\nX-B: c\r\n\r\n',
    'lines must end with CRLF',
  ],
];

t.test('a request head may hold tabs, spaces and obs-text, CR and LF only as a pair, no other control byte', async (t) => {
  for (const [name, head, reason] of HEAD_BYTES) {
    const result = readRequestHead(Buffer.from(head, 'latin1'), 0);
    if (reason === null) t.equal(result.kind, 'accepted', name);
    else t.same(result, { kind: 'refused', refusal: { kind: 'malformed', reason } }, name);
  }
});

t.test('header names uWS cannot parse are dropped, but redirect_to, which the service reads, is handed on as redirect-to', async (t) => {
  const head = 'GET / HTTP/1.1\r\nHost: a\r\na_b: 1\r\nRedirect_To: https://x.example/?a=b\r\nX-A: c\r\n\r\n';
  const result = readRequestHead(Buffer.from(head, 'latin1'), 0);
  if (result.kind !== 'accepted') throw new Error(JSON.stringify(result));
  t.equal(result.value.head.toString('latin1'), 'GET / HTTP/1.1\r\nHost: a\r\nredirect-to: https://x.example/?a=b\r\nX-A: c\r\n\r\n');
});

t.test('a request that ends its connection is known: Connection: close, or HTTP/1.0 without keep-alive', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['GET / HTTP/1.1\r\nHost: a\r\n\r\n', false],
    ['GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', true],
    ['GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, Close\r\n\r\n', true],
    ['GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n', false],
    ['GET / HTTP/1.0\r\n\r\n', true],
    ['GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n', false],
  ];
  for (const [head, closes] of cases) {
    const result = readRequestHead(Buffer.from(head, 'latin1'), 0);
    if (result.kind !== 'accepted') throw new Error(JSON.stringify(result));
    t.equal(result.value.closes, closes, JSON.stringify(head));
  }
  const rewritten = readRequestHead(Buffer.from('GET / HTTP/1.0\r\n\r\n', 'latin1'), 0);
  if (rewritten.kind !== 'accepted') throw new Error('refused');
  t.match(rewritten.value.head.toString('latin1'), /\r\nConnection: close\r\n/, 'HTTP/1.0 is handed on as HTTP/1.1 that closes');
});

const BODY = Buffer.from('5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n');

t.test('a chunked body ends at the same byte however it is cut', async (t) => {
  const next = Buffer.from('GET / HTTP/1.1\r\n');
  const stream = Buffer.concat([BODY, next]);
  for (let piece = 1; piece <= stream.length; piece++) {
    const body = new ChunkedBody();
    let consumed = 0;
    let done = false;
    for (let at = 0; at < stream.length && !done; at += piece) {
      const slice = stream.subarray(at, Math.min(at + piece, stream.length));
      const step = body.feed(slice, 0);
      if (step.kind === 'broken') throw new Error(step.reason);
      consumed += step.consumed;
      done = step.kind === 'done';
    }
    if (!done || consumed !== BODY.length) {
      t.fail(`cut every ${piece} bytes: done=${done}, consumed ${consumed} of ${BODY.length}`);
      return;
    }
  }
  t.pass('every cut ends the body exactly before the next request');
});

t.test('broken chunked framing is named', async (t) => {
  const broken = (text: string) => {
    const step = new ChunkedBody().feed(Buffer.from(text), 0);
    return step.kind === 'broken' ? step.reason : step.kind;
  };
  t.match(broken('zz\r\n'), /hexadecimal/);
  t.match(broken('3\r\nabcX'), /CRLF/);
  t.match(broken('3\nabc'), /CRLF/);
  t.match(broken(`${'1'.repeat(5000)}`), /too long/);
  t.match(broken('123456789\r\n'), /hexadecimal/, 'sizes over 8 hex digits are refused');
  t.equal(broken('3\r\nab'), 'more');
});

t.test('answers are counted: interim 100, HEAD, 204, Content-Length and chunked, cut anywhere', async (t) => {
  const answers = [
    'HTTP/1.1 100 Continue\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello',
    'HTTP/1.1 200 OK\r\nContent-Length: 120\r\n\r\n', // the answer to HEAD: no body follows
    'HTTP/1.1 204 No Content\r\n\r\n',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n',
  ].join('');
  const bytes = Buffer.from(answers);
  for (const piece of [1, 7, bytes.length]) {
    const framing = new ResponseFraming();
    for (const method of ['POST', 'HEAD', 'DELETE', 'GET', 'GET']) framing.handedOn(method);
    let completed = 0;
    for (let at = 0; at < bytes.length; at += piece) completed += framing.read(bytes.subarray(at, at + piece));
    t.equal(completed, 5, `cut every ${piece} bytes`);
    t.equal(framing.outstanding, 0);
  }
});

t.test('PROXY v2 headers', async (t) => {
  const v4 = proxyHeader({ remoteAddress: '203.0.113.9', remotePort: 4444, localAddress: '127.0.0.1', localPort: 8081 });
  t.equal(v4.subarray(0, 12).toString('hex'), '0d0a0d0a000d0a515549540a', 'the signature');
  t.equal(v4[12], 0x21, 'version 2, PROXY');
  t.equal(v4[13], 0x11, 'TCP over IPv4');
  t.equal(v4.readUInt16BE(14), 12);
  t.strictSame([...v4.subarray(16, 20)], [203, 0, 113, 9]);
  t.equal(v4.readUInt16BE(24), 4444);
  t.equal(v4.readUInt16BE(26), 8081);
  const mapped = proxyHeader({ remoteAddress: '::ffff:198.51.100.7', remotePort: 1, localAddress: '::ffff:127.0.0.1', localPort: 2 });
  t.equal(mapped[13], 0x11, 'an IPv4 client on a dual-stack socket is sent as IPv4');
  t.strictSame([...mapped.subarray(16, 20)], [198, 51, 100, 7]);
  const v6 = proxyHeader({ remoteAddress: '2001:db8::1', remotePort: 5, localAddress: '::1', localPort: 6 });
  t.equal(v6[13], 0x21, 'TCP over IPv6');
  t.equal(v6.readUInt16BE(14), 36);
  t.equal(v6.subarray(16, 32).toString('hex'), '20010db8000000000000000000000001');
  const unknown = proxyHeader({});
  t.equal(unknown.length, 16);
  t.equal(unknown[12], 0x20, 'LOCAL when the peer is unknown');
});

t.test('IPv6 clients reach the service with their address', async (t) => {
  const api = await startTestService({ AUTH_API_HOST: '::1' });
  t.teardown(() => api.stop());
  const port = api.service.port;
  const res = await fetch(`http://[::1]:${port}/settings`);
  t.equal(res.status, 200);
  await api.stop();
  const line = api.logs().find((l) => l.path === '/settings');
  t.equal(line?.remote_addr, '::1', 'in its short form');
});

t.test('with HTTP_GUARD=false uWS holds the port, and a PROXY header from a client is not believed', async (t) => {
  const api = await startTestService({ AUTH_HTTP_GUARD: 'false' });
  t.teardown(() => api.stop());
  const spoof = proxyHeader({ remoteAddress: '203.0.113.9', remotePort: 1, localAddress: '127.0.0.1', localPort: 2 });
  const answer = await new Promise<string>((resolve) => {
    const socket = net.connect(api.service.port, '127.0.0.1');
    let got = '';
    socket.on('data', (c: Buffer) => {
      got += c.toString();
      if (got.includes('}')) socket.end();
    });
    socket.on('close', () => resolve(got));
    socket.write(Buffer.concat([spoof, Buffer.from('GET /settings HTTP/1.1\r\nHost: x\r\n\r\n')]));
  });
  t.match(answer, /^HTTP\/1\.1 200 /);
  await api.stop();
  const line = api.logs().find((l) => l.path === '/settings');
  t.equal(line?.remote_addr, '127.0.0.1', 'the connection address, not the claimed one');
});
