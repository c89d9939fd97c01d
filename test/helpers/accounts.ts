// Signing a user up and in for session tests: an autoconfirmed email signup answers with a session.
import type { TestService } from './server.js';

export interface Session {
  access_token: string;
  refresh_token: string;
  user: { id: string; email: string };
  [k: string]: any;
}

let counter = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}-${process.pid}-${++counter}@example.com`;

/** Requires MAILER_AUTOCONFIRM=true on the service. */
export async function signUp(api: TestService, email = uniqueEmail(), password = 'Secret-password-1'): Promise<Session> {
  const res = await api.request('POST', '/signup', { body: { email, password } });
  if (res.status !== 200 || !res.body.refresh_token) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function signIn(api: TestService, email: string, password = 'Secret-password-1'): Promise<Session> {
  const res = await api.request('POST', '/token?grant_type=password', { body: { email, password } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  return res.body;
}

export const refresh = (api: TestService, token: string) =>
  api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: token } });
