// The client's address behind a proxy (docs/api.md#the-clients-address): the first IP address of
// X-Forwarded-For, or with SECURITY_SB_FORWARDED_FOR_ENABLED the leftmost of Sb-Forwarded-For, in the
// form the original writes it, lands in sessions, MFA challenges, audit entries and the request log;
// without those headers the connection's address does.
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { decodeJwt } from 'jose';
import { startTestService, type TestService } from './helpers/server.js';
import { uniqueEmail } from './helpers/accounts.js';
import { enrollTotp, totpCode } from './helpers/mfa.js';
import { canonicalAddress, clientAddress } from '../dist/server/http/client-address.js';

const PASSWORD = 'Secret-password-1';

t.test('addresses are read as Go reads them and written as it writes them', async (t) => {
  t.equal(canonicalAddress('203.0.113.7'), '203.0.113.7');
  t.equal(canonicalAddress('2001:DB8:0:0:0:0:0:1'), '2001:db8::1', 'IPv6 in its short, lower-case form');
  t.equal(canonicalAddress('::ffff:198.51.100.2'), '198.51.100.2', 'an IPv4-mapped address as IPv4');
  t.equal(canonicalAddress('::FFFF:C633:6402'), '198.51.100.2', 'written in hex too');
  t.equal(canonicalAddress('::198.51.100.2'), '::c633:6402', 'an IPv4-compatible address stays IPv6, as Go writes it');
  for (const bad of ['unknown', '203.0.113.7:443', '127.1', '0x7f.0.0.1', '010.0.0.1', 'fe80::1%eth0', '', '[::1]']) {
    t.equal(canonicalAddress(bad), undefined, `${JSON.stringify(bad)} is no address`);
  }
  const xff = { 'x-forwarded-for': 'unknown, 203.0.113.7:443 ,  198.51.100.9, 10.0.0.1' };
  t.equal(clientAddress(xff, '127.0.0.1', false), '198.51.100.9', 'the first value that is an address');
  t.equal(clientAddress({ 'x-forwarded-for': 'unknown' }, '127.0.0.1', false), '127.0.0.1', 'none: the connection');
  const both = { ...xff, 'sb-forwarded-for': '192.0.2.4, 192.0.2.5' };
  t.equal(clientAddress(both, '127.0.0.1', true), '192.0.2.4', 'Sb-Forwarded-For first when enabled');
  t.equal(clientAddress(both, '127.0.0.1', false), '198.51.100.9', 'and ignored when not');
  t.equal(
    clientAddress({ ...xff, 'sb-forwarded-for': 'garbage, 192.0.2.5' }, '127.0.0.1', true),
    '198.51.100.9',
    'only its leftmost value counts',
  );
});

async function signUpFrom(api: TestService, headers: Record<string, string>) {
  const res = await api.request('POST', '/signup', { body: { email: uniqueEmail('xff'), password: PASSWORD }, headers });
  if (res.status !== 200) throw new Error(res.text);
  return res.body as { access_token: string; user: { id: string } };
}

const sessionIp = async (api: TestService, accessToken: string) =>
  (await api.db.query('select host(ip::inet) as ip from sessions where id = $1', [decodeJwt(accessToken).session_id])).rows[0].ip as string;

t.test('behind a proxy that sets X-Forwarded-For', async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => api.stop());
  const proxied = { 'x-forwarded-for': 'unknown, 2001:DB8::7, 10.0.0.1' };

  const direct = await signUpFrom(api, {});
  t.equal(await sessionIp(api, direct.access_token), '127.0.0.1', 'no header: the connection');
  const s = await signUpFrom(api, proxied);
  t.equal(await sessionIp(api, s.access_token), '2001:db8::7', "the session records the client's address");

  const factor = await enrollTotp(api, s.access_token);
  const challenged = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, headers: proxied });
  t.equal(challenged.status, 200);
  const row = (await api.db.query('select host(ip_address::inet) as ip from mfa_challenges where id = $1', [challenged.body.id])).rows[0];
  t.equal(row.ip, '2001:db8::7', 'the challenge records it');
  const entry = (
    await api.db.query(
      `select ip_address from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'challenge_created'`,
      [s.user.id],
    )
  ).rows[0];
  t.equal(entry.ip_address, '2001:db8::7', 'and so does its audit entry');

  const code = totpCode(factor.totp.secret);
  const elsewhere = await api.request('POST', `/factors/${factor.id}/verify`, {
    token: s.access_token,
    headers: { 'x-forwarded-for': '198.51.100.1' },
    body: { challenge_id: challenged.body.id, code },
  });
  t.equal(elsewhere.status, 422, 'verifying from another client address is refused');
  t.equal(elsewhere.body.error_code, 'mfa_ip_address_mismatch');
  const same = await api.request('POST', `/factors/${factor.id}/verify`, {
    token: s.access_token,
    headers: proxied,
    body: { challenge_id: challenged.body.id, code },
  });
  t.equal(same.status, 200, 'from the same one it is accepted');

  await api.stop();
  const lines = api.logs().filter((l) => l.path === `/factors/${factor.id}/challenge`);
  t.same(
    lines.map((l) => l.remote_addr),
    ['2001:db8::7'],
    "the request log's remote_addr is the client's address",
  );
});

t.test('SECURITY_SB_FORWARDED_FOR_ENABLED: Sb-Forwarded-For comes first', async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SECURITY_SB_FORWARDED_FOR_ENABLED: 'true' });
  t.teardown(() => api.stop());
  const s = await signUpFrom(api, { 'sb-forwarded-for': '::ffff:192.0.2.44', 'x-forwarded-for': '198.51.100.3' });
  t.equal(await sessionIp(api, s.access_token), '192.0.2.44');
  const fallback = await signUpFrom(api, { 'sb-forwarded-for': 'not-an-address', 'x-forwarded-for': '198.51.100.3' });
  t.equal(await sessionIp(api, fallback.access_token), '198.51.100.3', 'an unusable one falls back to X-Forwarded-For');
});

t.test('a header sent on two lines counts by its first, as the original reads it', async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => api.stop());
  const body = JSON.stringify({ email: uniqueEmail('two-lines'), password: PASSWORD });
  const url = new URL('/signup', api.url);
  // fetch would fold the two lines into one; node:http sends an array as separate lines.
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ['203.0.113.41', '198.51.100.42'] },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  t.equal(answer.status, 200, answer.text);
  t.equal(await sessionIp(api, JSON.parse(answer.text).access_token), '203.0.113.41');
});
