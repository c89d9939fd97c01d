// Every endpoint that takes redirect_to, driven with the bypass corpus (test/fixtures/redirect-bypass.json):
// the redirect_to a mail link or action_link carries, and the Location a browser gets when it follows that
// link, must stay on the site or the allow-listed hosts. Legitimate targets come through normalised.
import t from 'tap';
import { startMailStack, linkOf } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { confirmedUser } from './helpers/users.js';
import { corpus, landsSafely, withoutFragment, REDIRECT_MAIL_ENV } from './helpers/redirects.js';
import type { TestService } from './helpers/server.js';
import type { SmtpTestServer } from './helpers/smtp.js';

const stack = await startMailStack(REDIRECT_MAIL_ENV);
const { api, smtp } = stack;
t.teardown(() => stack.stop());
const admin = await adminToken();

// The links of mail flows are followed one by one, so they take every third payload (and every reported one);
// GET /verify and the body of /admin/generate_link take the whole corpus.
const REPORTED = corpus.refused.filter((p) => /^https:\/\/evil\.example(\?|\\|%5c@)/.test(p));
const everyOther = [...new Set([...corpus.refused.filter((_, i) => i % 3 === 0), ...REPORTED])];

/** What the endpoint carried on and where following it led; null when the request itself was refused (400). */
type Outcome = { stored: string; landed: string } | null;
type Flow = (target: string) => Promise<Outcome>;

const q = (target: string) => `redirect_to=${encodeURIComponent(target)}`;
const follow = async (link: string) => {
  const url = new URL(link);
  const res = await api.request('GET', url.pathname + url.search);
  if (res.status !== 303) throw new Error(`following ${link}: ${res.status} ${res.text}`);
  return res.headers.get('location')!;
};
const mailedLink = async (mailbox: SmtpTestServer, to: string) => {
  const mail = await mailbox.waitForMail(to, 20_000);
  return { stored: linkOf(mail).redirectTo, landed: await follow(mail.link!) };
};
/** Whether the request was accepted; a 400 (a NUL character, say) is a refusal, anything else but 200 a failure. */
const accepted = async (res: Promise<{ status: number; text: string }>) => {
  const r = await res;
  if (r.status === 400) return false;
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  return true;
};
const ok = async (res: Promise<{ status: number; text: string }>) => {
  if (!(await accepted(res))) throw new Error('refused');
};
// Lifts the per-user send interval (and, for /resend, undoes the confirmation that following its link made).
const resetSends = (api: TestService, email: string, unconfirm = false) =>
  api.db.query(
    `update users set recovery_sent_at = null,
  confirmation_sent_at = null, email_change_sent_at = null, email_confirmed_at = case when $2 then null else email_confirmed_at end
  where email = $1`,
    [email, unconfirm],
  );

async function existingUser(): Promise<string> {
  const email = uniqueEmail('redirect');
  await ok(api.request('POST', '/admin/users', { token: admin, body: { email, email_confirm: true } }));
  return email;
}

const flows: Record<string, { payloads: string[]; flow: Flow }> = {
  'GET /verify (query)': {
    payloads: corpus.refused,
    flow: async (target) => {
      const res = await api.request('GET', `/verify?type=magiclink&token=${'f'.repeat(56)}&${q(target)}`);
      if (res.status === 400) return null;
      const landed = res.headers.get('location')!;
      return { stored: landed, landed };
    },
  },
  'POST /admin/generate_link (body)': {
    payloads: corpus.refused,
    flow: await (async () => {
      const email = await existingUser();
      return async (target: string) => {
        const res = await api.request('POST', '/admin/generate_link', {
          token: admin,
          body: { type: 'magiclink', email, redirect_to: target },
        });
        if (res.status === 400) return null;
        if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
        const carried = new URL(res.body.action_link).searchParams.get('redirect_to')!;
        if (carried !== res.body.redirect_to) throw new Error(`action_link carries ${carried}, body says ${res.body.redirect_to}`);
        return { stored: res.body.redirect_to, landed: await follow(res.body.action_link) };
      };
    })(),
  },
  'POST /admin/generate_link (query)': {
    payloads: everyOther,
    flow: await (async () => {
      const email = await existingUser();
      return async (target: string) => {
        const res = await api.request('POST', `/admin/generate_link?${q(target)}`, { token: admin, body: { type: 'recovery', email } });
        if (res.status === 400) return null;
        if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
        return { stored: res.body.redirect_to, landed: await follow(res.body.action_link) };
      };
    })(),
  },
  'POST /recover': {
    payloads: everyOther,
    flow: await (async () => {
      const email = await existingUser();
      return async (target: string) => {
        await resetSends(api, email);
        if (!(await accepted(api.request('POST', `/recover?${q(target)}`, { body: { email } })))) return null;
        return mailedLink(smtp, email);
      };
    })(),
  },
  'POST /magiclink': {
    payloads: everyOther,
    flow: await (async () => {
      const email = await existingUser();
      return async (target: string) => {
        await resetSends(api, email);
        if (!(await accepted(api.request('POST', `/magiclink?${q(target)}`, { body: { email } })))) return null;
        return mailedLink(smtp, email);
      };
    })(),
  },
  'POST /otp': {
    payloads: everyOther,
    flow: await (async () => {
      const email = await existingUser();
      return async (target: string) => {
        await resetSends(api, email);
        if (!(await accepted(api.request('POST', `/otp?${q(target)}`, { body: { email, create_user: false } })))) return null;
        return mailedLink(smtp, email);
      };
    })(),
  },
  'POST /signup': {
    payloads: everyOther,
    flow: async (target) => {
      const email = uniqueEmail('redirect-signup');
      if (!(await accepted(api.request('POST', `/signup?${q(target)}`, { body: { email, password: 'Secret-password-1' } })))) return null;
      return mailedLink(smtp, email);
    },
  },
  'POST /resend': {
    payloads: everyOther,
    flow: await (async () => {
      const email = uniqueEmail('redirect-resend');
      await ok(api.request('POST', '/signup', { body: { email, password: 'Secret-password-1' } }));
      await smtp.waitForMail(email);
      return async (target: string) => {
        await resetSends(api, email, true);
        if (!(await accepted(api.request('POST', `/resend?${q(target)}`, { body: { type: 'signup', email } })))) return null;
        return mailedLink(smtp, email);
      };
    })(),
  },
  'POST /invite': {
    payloads: everyOther,
    flow: async (target) => {
      const email = uniqueEmail('redirect-invite');
      if (!(await accepted(api.request('POST', `/invite?${q(target)}`, { token: admin, body: { email } })))) return null;
      return mailedLink(smtp, email);
    },
  },
  'PUT /user (email change)': {
    payloads: everyOther,
    flow: await (async () => {
      const session = await confirmedUser(api);
      await smtp.waitForMail(session.user.email);
      return async (target: string) => {
        await resetSends(api, session.user.email);
        const to = uniqueEmail('redirect-change');
        if (!(await accepted(api.request('PUT', `/user?${q(target)}`, { token: session.access_token, body: { email: to } })))) return null;
        return mailedLink(smtp, to);
      };
    })(),
  },
};

// The flows touch different users, so they run side by side; each walks its payloads in order.
async function unsafeOutcomes(payloads: string[], flow: Flow) {
  const unsafe: Array<{ payload: string; outcome: Outcome }> = [];
  for (const payload of payloads) {
    const outcome = await flow(payload);
    if (outcome && (!landsSafely(outcome.stored) || !landsSafely(outcome.landed))) unsafe.push({ payload, outcome });
  }
  return unsafe;
}
const walks = new Map(
  Object.entries(flows).map(([name, { payloads, flow }]) => [name, unsafeOutcomes(payloads, flow).catch((err: Error) => err)]),
);

for (const [name, { payloads, flow }] of Object.entries(flows)) {
  t.test(`${name}: ${payloads.length} bypass payloads stay on the site or the allowed hosts`, async (t) => {
    t.strictSame(await walks.get(name), []);
  });

  t.test(`${name}: legitimate targets are carried and followed as their normalised href`, async (t) => {
    for (const [input, href] of corpus.accepted) {
      const outcome = await flow(input);
      if (!outcome) {
        t.fail(`${input} was refused`);
        continue;
      }
      const { stored, landed } = outcome;
      t.equal(withoutFragment(stored), withoutFragment(href), `${input} is carried`);
      t.equal(withoutFragment(landed), withoutFragment(href), `${input} is where the link leads`);
    }
  });
}
