// Times the service takes from its own clock and writes to a user are stored to the microsecond, as the
// original stores its Go clock's time.Now() (docs/users-and-audit.md#user-json): a confirmation (by the
// admin, by an OAuth provider), an invitation, every *_sent_at. The user JSON then shows the stored time whole, with the six-digit fraction
// the original's shows. A JavaScript Date holds milliseconds only; such a time stored as it is ends in 000.
import t, { type Test } from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import type { Reply } from './helpers/server.js';
import { signIn, uniqueEmail } from './helpers/accounts.js';
import { adminCreatedUser } from './helpers/users.js';
import { githubPerson, startGithubFake } from './helpers/github.js';
import { authorizeUrl, callback, fragmentOf, githubEnv } from './helpers/oauth.js';

const gh = await startGithubFake();
const stack = await startMailStack(githubEnv(gh), { sms: true });
const { api } = stack;
t.teardown(async () => {
  await stack.stop();
  await gh.stop();
});
const admin = await adminToken();

/** A step on the way is expected to succeed; its failure names itself. */
function expect200(res: Reply): void {
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
}

type Column =
  | 'email_confirmed_at'
  | 'phone_confirmed_at'
  | 'invited_at'
  | 'confirmation_sent_at'
  | 'recovery_sent_at'
  | 'email_change_sent_at'
  | 'phone_change_sent_at'
  | 'reauthentication_sent_at';

/** The column as stored, with all six digits (`…:05.123456`), and as the original's JSON writes it. */
async function stored(id: string, column: Column): Promise<{ digits: string; json: string }> {
  const { rows } = await api.db.query(
    `select to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as digits from users where id = $1`,
    [id],
  );
  const digits: string | null = rows[0]?.digits ?? null;
  if (digits === null) throw new Error(`${column} of ${id} is not set`);
  // RFC3339Nano: trailing zeros of the fraction dropped, and the dot with them when nothing is left.
  return { digits, json: `${digits.replace(/0+$/, '').replace(/\.$/, '')}Z` };
}

/**
 * Runs `write` (which makes a user and has the service set `columns` on it, answering with its JSON when
 * the endpoint answers with the user) on two users, and checks each column: the answer and GET
 * /admin/users/{id} show the stored time whole, and the stored times carry microseconds within the
 * millisecond. The clock's sub-millisecond digits are 000 about one time in a thousand, so one of the two
 * having others is asked; a time from a Date has 000 every time.
 */
async function checkWrites(
  t: Test,
  columns: Column[],
  write: (n: number) => Promise<{ id: string; answer?: Record<string, unknown> }>,
): Promise<void> {
  const subMillisecond = new Map<Column, string[]>(columns.map((c) => [c, []]));
  for (let n = 0; n < 2; n++) {
    const { id, answer } = await write(n);
    const shown = await api.request('GET', `/admin/users/${id}`, { token: admin });
    expect200(shown);
    for (const column of columns) {
      const { digits, json } = await stored(id, column);
      if (answer) t.equal(answer[column], json, `the answer shows ${column} as stored`);
      t.equal(shown.body[column], json, `GET /admin/users/{id} shows ${column} as stored`);
      subMillisecond.get(column)!.push(digits.slice(-3));
    }
  }
  for (const [column, digits] of subMillisecond) {
    t.ok(
      digits.some((d) => d !== '000'),
      `${column} is stored to the microsecond (digits below the millisecond: ${digits.join(', ')})`,
    );
  }
}

t.test('POST /admin/users with email_confirm and phone_confirm', (t) =>
  checkWrites(t, ['email_confirmed_at', 'phone_confirmed_at'], async (n) => {
    const res = await api.request('POST', '/admin/users', {
      token: admin,
      body: { email: uniqueEmail('micro-create'), phone: `1555010${1000 + n}`, email_confirm: true, phone_confirm: true },
    });
    expect200(res);
    return { id: res.body.id, answer: res.body };
  }),
);

t.test('PUT /admin/users/{id} confirming an address', (t) =>
  checkWrites(t, ['email_confirmed_at'], async () => {
    const made = await api.request('POST', '/admin/users', { token: admin, body: { email: uniqueEmail('micro-update') } });
    expect200(made);
    t.notOk(made.body.email_confirmed_at);
    const res = await api.request('PUT', `/admin/users/${made.body.id}`, { token: admin, body: { email_confirm: true } });
    expect200(res);
    return { id: res.body.id, answer: res.body };
  }),
);

t.test('POST /invite', (t) =>
  checkWrites(t, ['invited_at', 'confirmation_sent_at'], async () => {
    const res = await api.request('POST', '/invite', { token: admin, body: { email: uniqueEmail('micro-invite') } });
    expect200(res);
    return { id: res.body.id, answer: res.body };
  }),
);

const generate = async (body: Record<string, unknown>) => {
  const res = await api.request('POST', '/admin/generate_link', { token: admin, body });
  expect200(res);
  return { id: res.body.id as string, answer: res.body as Record<string, unknown> };
};

t.test('POST /admin/generate_link', async (t) => {
  await t.test('invite', (t) =>
    checkWrites(t, ['invited_at', 'confirmation_sent_at'], () => generate({ type: 'invite', email: uniqueEmail('micro-gl-invite') })),
  );
  await t.test('signup', (t) =>
    checkWrites(t, ['confirmation_sent_at'], () =>
      generate({ type: 'signup', email: uniqueEmail('micro-gl-signup'), password: 'Secret-password-1' }),
    ),
  );
  await t.test('recovery', (t) =>
    checkWrites(t, ['recovery_sent_at'], async () => generate({ type: 'recovery', email: (await adminCreatedUser(api)).email })),
  );
  await t.test('email_change_new', (t) =>
    checkWrites(t, ['email_change_sent_at'], async () =>
      generate({ type: 'email_change_new', email: (await adminCreatedUser(api)).email, new_email: uniqueEmail('micro-gl-new') }),
    ),
  );
});

t.test('POST /recover', (t) =>
  checkWrites(t, ['recovery_sent_at'], async () => {
    const user = await adminCreatedUser(api);
    const res = await api.request('POST', '/recover', { body: { email: user.email } });
    expect200(res);
    return { id: user.id };
  }),
);

t.test('PUT /user: an email change and a phone change', (t) =>
  checkWrites(t, ['email_change_sent_at', 'phone_change_sent_at'], async (n) => {
    const user = await adminCreatedUser(api);
    const session = await signIn(api, user.email);
    const email = await api.request('PUT', '/user', { token: session.access_token, body: { email: uniqueEmail('micro-change') } });
    expect200(email);
    const phone = await api.request('PUT', '/user', { token: session.access_token, body: { phone: `1555020${1000 + n}` } });
    expect200(phone);
    t.equal(phone.body.email_change_sent_at, email.body.email_change_sent_at, 'the second answer reads the first change back whole');
    return { id: user.id, answer: phone.body };
  }),
);

t.test('GET /reauthenticate', (t) =>
  checkWrites(t, ['reauthentication_sent_at'], async () => {
    const user = await adminCreatedUser(api);
    const session = await signIn(api, user.email);
    const res = await api.request('GET', '/reauthenticate', { token: session.access_token });
    expect200(res);
    return { id: user.id };
  }),
);

let nextGithubId = 9100;
/** A GitHub sign-in (the local fake) as a browser makes it, as a person with a verified `email`; the session it gives. */
async function githubSignIn(email: string, query = ''): Promise<string> {
  gh.approveAs = ++nextGithubId;
  gh.users.set(nextGithubId, githubPerson(nextGithubId, email));
  const { location } = await callback(api, await gh.approve((await authorizeUrl(api, `provider=github${query}`)).href));
  const token = fragmentOf(location).access_token;
  if (!token) throw new Error(`no session: ${location.href}`);
  return token;
}

t.test('an OAuth sign-in: a new account with a verified address, an invite accepted', async (t) => {
  await t.test('new account', (t) =>
    checkWrites(t, ['email_confirmed_at'], async () => {
      const me = await api.request('GET', '/user', { token: await githubSignIn(uniqueEmail('micro-github')) });
      expect200(me);
      return { id: me.body.id, answer: me.body };
    }),
  );
  await t.test('invite', (t) =>
    checkWrites(t, ['email_confirmed_at'], async () => {
      const invited = await generate({ type: 'invite', email: uniqueEmail('micro-github-invite') });
      const me = await api.request('GET', '/user', {
        token: await githubSignIn(invited.answer.email as string, `&invite_token=${invited.answer.hashed_token as string}`),
      });
      expect200(me);
      t.equal(me.body.id, invited.id, 'the invited user accepted');
      return { id: me.body.id, answer: me.body };
    }),
  );
});
