// A request without an acceptable redirect_to is sent back to its Referer when that passes the same check,
// else to SITE_URL, as the original resolves it (docs/redirects.md#where-the-target-comes-from): a page of
// an allow-listed app that signs a user up without emailRedirectTo gets the user back. The Referer is
// judged like redirect_to, so the bypass corpus sent as a Referer never leaves the site or the allowed hosts.
import t from 'tap';
import { startMailStack, linkOf } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { corpus, landsSafely, SITE_URL, REDIRECT_MAIL_ENV } from './helpers/redirects.js';

const stack = await startMailStack(REDIRECT_MAIL_ENV);
const { api, smtp } = stack;
let stopped = false;
const stop = async () => {
  if (stopped) return;
  stopped = true;
  await stack.stop();
};
t.teardown(stop);
const admin = await adminToken();

const PREVIEW_PAGE = 'https://preview-42.allowed.example.test/sign-up?step=1';
const OTHER_APP = 'https://other.allowed.example.test/welcome';

const mailedTarget = async (to: string) => linkOf(await smtp.waitForMail(to, 20_000)).redirectTo;
async function existingUser(): Promise<string> {
  const email = uniqueEmail('referer');
  const res = await api.request('POST', '/admin/users', { token: admin, body: { email, email_confirm: true } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return email;
}

t.test('sign-up without redirect_to: the confirmation link leads back to the allowed page that sent the request', async (t) => {
  const email = uniqueEmail('referer-signup');
  const res = await api.request('POST', '/signup', {
    body: { email, password: 'Secret-password-1' },
    headers: { referer: PREVIEW_PAGE },
  });
  t.equal(res.status, 200);
  t.equal(await mailedTarget(email), PREVIEW_PAGE);
});

t.test('a redirect_to that passes the check wins over the Referer', async (t) => {
  const email = await existingUser();
  const res = await api.request('POST', `/recover?redirect_to=${encodeURIComponent(OTHER_APP)}`, {
    body: { email },
    headers: { referer: PREVIEW_PAGE },
  });
  t.equal(res.status, 200);
  t.equal(await mailedTarget(email), OTHER_APP);
});

t.test('a redirect_to that fails the check gives way to an allowed Referer, as in the original', async (t) => {
  const email = await existingUser();
  const res = await api.request('POST', `/magiclink?redirect_to=${encodeURIComponent('https://evil.example/')}`, {
    body: { email },
    headers: { referer: PREVIEW_PAGE },
  });
  t.equal(res.status, 200);
  t.equal(await mailedTarget(email), PREVIEW_PAGE);
});

t.test('a Referer outside the site and the allow list falls back to SITE_URL', async (t) => {
  const email = await existingUser();
  const res = await api.request('POST', '/otp', {
    body: { email, create_user: false },
    headers: { referer: 'https://mail.example.org/inbox' },
  });
  t.equal(res.status, 200);
  t.equal(await mailedTarget(email), SITE_URL);
});

t.test('GET /verify without redirect_to sends the browser to its allowed Referer', async (t) => {
  const res = await api.request('GET', `/verify?type=magiclink&token=${'f'.repeat(56)}`, { headers: { referer: PREVIEW_PAGE } });
  t.equal(res.status, 303);
  t.equal(res.headers.get('location')!.split('#')[0], PREVIEW_PAGE, 'the error lands on the page, in its fragment');
  const bare = await api.request('GET', `/verify?type=magiclink&token=${'f'.repeat(56)}`);
  t.equal(bare.headers.get('location')!.split('#')[0], SITE_URL, 'without a Referer: SITE_URL');
});

t.test('a redirect_to request header is read as the original reads it, whatever its case, and wins over the Referer', async (t) => {
  for (const name of ['redirect_to', 'Redirect_To']) {
    const res = await api.request('GET', `/verify?type=magiclink&token=${'f'.repeat(56)}`, {
      headers: { [name]: OTHER_APP, referer: PREVIEW_PAGE },
    });
    t.equal(res.headers.get('location')!.split('#')[0], OTHER_APP, name);
  }
  const email = await existingUser();
  const res = await api.request('POST', '/recover', { body: { email }, headers: { redirect_to: OTHER_APP } });
  t.equal(res.status, 200);
  t.equal(await mailedTarget(email), OTHER_APP, 'and carried in the mailed link');
});

// Header values carry printable ASCII only; the rest of the corpus cannot be sent as a Referer at all.
const sendable = corpus.refused.filter((p) => /^[\x20-\x7e]+$/.test(p));

t.test(`${sendable.length} bypass payloads as a Referer: GET /verify never leaves the site or the allowed hosts`, async (t) => {
  const unsafe: Array<{ payload: string; landed: string | null }> = [];
  for (const payload of sendable) {
    const res = await api.request('GET', `/verify?type=magiclink&token=${'f'.repeat(56)}`, { headers: { referer: payload } });
    const landed = res.headers.get('location');
    if (res.status !== 303 || !landed || !landsSafely(landed)) unsafe.push({ payload, landed });
  }
  t.ok(sendable.length > 500, 'most of the corpus is sendable');
  t.strictSame(unsafe, []);
});

t.test('legitimate Referers are used as their normalised href', async (t) => {
  for (const [input, href] of corpus.accepted) {
    const res = await api.request('GET', `/verify?type=magiclink&token=${'f'.repeat(56)}`, { headers: { referer: input } });
    t.equal(res.headers.get('location')!.split('#')[0], href.split('#')[0], input);
  }
});

t.test("the request line names the target as `referer`, as the original's does", async (t) => {
  t.equal((await api.request('GET', '/settings', { headers: { referer: PREVIEW_PAGE } })).status, 200);
  t.equal((await api.request('GET', '/settings', { headers: { referer: 'https://evil.example/' } })).status, 200);
  t.equal((await api.request('GET', `/settings?redirect_to=${encodeURIComponent(OTHER_APP)}`)).status, 200);
  t.equal((await api.request('GET', '/settings', { headers: { redirect_to: OTHER_APP, referer: PREVIEW_PAGE } })).status, 200);
  await stop(); // the log is complete once the service has stopped
  const settings = api.logs().filter((l) => l.msg === 'request completed' && l.path === '/settings');
  t.strictSame(
    settings.map((l) => l.referer),
    [PREVIEW_PAGE, SITE_URL, OTHER_APP, OTHER_APP],
    'an allowed Referer, a refused one (SITE_URL), redirect_to in the query, redirect_to as a header',
  );
});
