// The HTTP guard in front of uWS (src/server/guard/): every request in the hostile corpus gets a prompt,
// well-formed answer — the service's own, or the guard's JSON refusal — instead of silence or a reset;
// big heads split over many reads are answered; refusals keep pipelined answers in order; the service
// still sees the client's address.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startTestService } from './helpers/server.js';
import { answers, bodyText, completeAnswers, exchange as rawExchange, statusOf } from './helpers/raw-http.js';

interface HostileCase {
  name: string;
  parts: string[];
  fill?: number;
  split?: number;
  status: number;
  error_code?: string;
}

const corpus = JSON.parse(readFileSync(new URL('./fixtures/hostile-requests.json', import.meta.url), 'utf8')) as { cases: HostileCase[] };

const api = await startTestService();
t.teardown(() => api.stop());
const port = Number(new URL(api.url).port);

const exchange = (writes: Buffer[], complete: (received: string) => boolean, pauseMs = 20) =>
  rawExchange(port, writes, complete, { pauseMs });
const bodyOf = (answer: string) => JSON.parse(bodyText(answer));

function bytesOf(c: HostileCase): Buffer[] {
  const whole = Buffer.from(c.parts.join('').replace('@FILL@', 'a'.repeat(c.fill ?? 0)), 'latin1');
  const pieces = c.split ?? 1;
  const size = Math.ceil(whole.length / pieces);
  return Array.from({ length: pieces }, (_, i) => whole.subarray(i * size, (i + 1) * size)).filter((b) => b.length > 0);
}

for (const c of corpus.cases) {
  t.test(c.name, async (t) => {
    const { received, error } = await exchange(bytesOf(c), (r) => completeAnswers(r).length >= 1);
    t.equal(error, null, 'a complete answer arrived');
    const [answer] = completeAnswers(received);
    t.equal(statusOf(answer), c.status, answer?.split('\r\n')[0]);
    if (c.error_code) {
      t.equal(bodyOf(answer).error_code, c.error_code);
      t.equal(bodyOf(answer).code, c.status);
      t.match(answer, /\r\ncontent-type: application\/json\r\n/i);
    }
  });
}

t.test('a refused request is answered in order after the requests pipelined before it, then the connection closes', async (t) => {
  const requests = [
    'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /settings HTTP/1.1\r\nHost: x\r\n\r\n',
    'QUERY /health HTTP/1.1\r\nHost: x\r\n\r\n',
  ];
  const { received, error } = await exchange([Buffer.from(requests.join(''))], (r) => completeAnswers(r).length >= 3);
  t.equal(error, null);
  const [health, settings, refused] = completeAnswers(received);
  t.equal(statusOf(health), 200);
  t.equal(statusOf(settings), 200);
  t.ok(bodyOf(settings).external, 'the second answer is the settings');
  t.equal(statusOf(refused), 405);
  t.match(refused, /\r\nConnection: close\r\n/);
});

t.test('requests after a good one on the same connection are checked too', async (t) => {
  const first = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
  const second = 'GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n';
  const { received, error } = await exchange([Buffer.from(first), Buffer.from(second, 'latin1')], (r) => completeAnswers(r).length >= 2);
  t.equal(error, null);
  const [ok, refused] = completeAnswers(received);
  t.equal(statusOf(ok), 200);
  t.equal(statusOf(refused), 400);
  t.equal(bodyOf(refused).error_code, 'bad_request');
});

t.test('keep-alive: many requests on one connection, heads split at every byte boundary of a read', async (t) => {
  const request = Buffer.from(`GET /health HTTP/1.1\r\nHost: x\r\nCookie: ${'k'.repeat(6000)}\r\n\r\n`);
  const writes: Buffer[] = [];
  for (const cut of [1, 100, 4095, 4096, 4097, 6000]) writes.push(request.subarray(0, cut), request.subarray(cut));
  const { received, error } = await exchange(writes, (r) => completeAnswers(r).length >= 6, 5);
  t.equal(error, null);
  t.strictSame(completeAnswers(received).map(statusOf), [200, 200, 200, 200, 200, 200]);
});

t.test('a body sent in pieces after its head reaches the service whole', async (t) => {
  const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password-123' });
  const head = `POST /token?grant_type=password HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const writes = [Buffer.from(head), Buffer.from(body.slice(0, 10)), Buffer.from(body.slice(10))];
  const { received, error } = await exchange(writes, (r) => completeAnswers(r).length >= 1);
  t.equal(error, null);
  const [answer] = completeAnswers(received);
  t.equal(statusOf(answer), 400);
  t.equal(bodyOf(answer).error_code, 'invalid_credentials');
});

t.test('a head that stops arriving is answered 408 when the head timeout ends', async (t) => {
  const { received, error } = await exchange([Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\n')], (r) => completeAnswers(r).length >= 1);
  t.equal(error, null);
  const [answer] = completeAnswers(received);
  t.equal(statusOf(answer), 408);
  t.equal(bodyOf(answer).error_code, 'request_timeout');
});

// uWS has the head by then and would close the connection unanswered 8 to 12 s after its last read.
t.test('a body that stops arriving is answered 408, before uWS would drop the connection', async (t) => {
  const head = 'POST /token?grant_type=password HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
  const { received, error } = await exchange([Buffer.from(head), Buffer.from('{"email":')], (r) => completeAnswers(r).length >= 1);
  t.equal(error, null, 'an answer, not a silent close');
  const [answer] = completeAnswers(received);
  t.equal(statusOf(answer), 408);
  t.strictSame(bodyOf(answer), { code: 408, error_code: 'request_timeout', msg: 'The request body did not arrive in time' });
});

t.test('the service sees the client address through the guard', async (t) => {
  const res = await api.request('GET', '/settings');
  t.equal(res.status, 200);
  const line = api.logs().find((l) => l.path === '/settings');
  t.equal(line?.remote_addr, '127.0.0.1');
});

t.test('refusals are logged with their reason and never the header values', async (t) => {
  const secret = 'sk-guard-secret-value';
  const { error } = await exchange(
    [Buffer.from(`GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\u0000\r\n\r\n`, 'latin1')],
    (r) => completeAnswers(r).length >= 1,
  );
  t.equal(error, null);
  const refusals = api.logs().filter((l) => l.msg === 'request refused by the HTTP guard');
  t.ok(refusals.some((l) => l.status === 400 && /control character/.test(l.reason)));
  t.notOk(JSON.stringify(api.logs()).includes(secret), 'the header value is not in the log');
});

t.test('HEAD is answered without a body (uWS alone writes one), so the answers after it stay in step', async (t) => {
  const requests =
    'HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\nQUERY /health HTTP/1.1\r\nHost: x\r\n\r\n';
  const { received, error } = await exchange([Buffer.from(requests)], (r) => r.includes('method_not_allowed'));
  t.equal(error, null, 'the refusal after HEAD and GET arrived');
  const [head, get, refused] = answers(received);
  t.match(head, /^HTTP\/1\.1 200 /);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1]);
  t.ok(length > 0, 'HEAD reports the length the GET has');
  t.ok(head.endsWith('\r\n\r\n'), 'and carries no body');
  t.match(get, /^HTTP\/1\.1 200 /);
  t.equal(Buffer.byteLength(get.slice(get.indexOf('\r\n\r\n') + 4)), length, 'the GET body has that length');
  t.equal(statusOf(refused), 405);
});
