// Users for PUT /user and friends on a service WITHOUT autoconfirm: sign up over HTTP, confirm the address
// in the database (the confirmation flow is tested elsewhere), then sign in with the password grant.
import type { TestService } from './server.js';
import { signIn, uniqueEmail, type Session } from './accounts.js';
import { adminToken } from './admin.js';

export const PASSWORD = 'Secret-password-1';

export async function confirmedUser(api: TestService, email = uniqueEmail()): Promise<Session> {
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  if (res.status !== 200) throw new Error(`signup failed: ${res.status} ${res.text}`);
  await api.db.query('update users set email_confirmed_at = now() where id = $1', [res.body.id]);
  return signIn(api, email);
}

/** The code a default mail ("enter the code: N") or SMS ("Your code is N") carries. */
export function codeIn(text: string): string {
  const match = /code(?::| is)\s*(\d{6,10})/.exec(text);
  if (!match) throw new Error(`no code in: ${text}`);
  return match[1];
}

/** The path and query of a mail link to the service (the link's host is the service's own). */
export const pathOf = (link: string) => {
  const u = new URL(link);
  return u.pathname + u.search;
};

/** A confirmed user with PASSWORD made through the admin API: no hook, mail or sign-in on the way. */
export async function adminCreatedUser(api: TestService, email = uniqueEmail('admin-made')): Promise<{ id: string; email: string }> {
  const res = await api.request('POST', '/admin/users', {
    token: await adminToken(),
    body: { email, password: PASSWORD, email_confirm: true },
  });
  if (res.status !== 200) throw new Error(`admin create failed: ${res.status} ${res.text}`);
  return { id: res.body.id, email };
}
