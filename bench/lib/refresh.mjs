// Refresh-token chains for autocannon: each connection owns one session and always presents the token
// the previous answer returned (a rotated token presented again would be a reuse, not a refresh).
import { JSON_HEADERS } from './context.mjs';

export const REFRESH_PATH = '/token?grant_type=refresh_token';

/** The requests of one connection: its own chain, `session.refresh_token` advanced by every 200 answer. */
export function refreshChain(session) {
  return [
    {
      method: 'POST',
      path: REFRESH_PATH,
      headers: JSON_HEADERS,
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ refresh_token: session.refresh_token }) }),
      onResponse: (status, body) => {
        if (status === 200) session.refresh_token = JSON.parse(body).refresh_token;
      },
    },
  ];
}

/**
 * null when the build has the refresh grant (and `session` was rotated once: its refresh_token is
 * updated), else why the refresh scenarios are skipped.
 */
export async function refreshUnsupported(url, session) {
  const res = await fetch(url + REFRESH_PATH, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ refresh_token: session.refresh_token }),
  });
  const text = await res.text();
  if (res.status === 400 && text.includes('unsupported_grant_type')) {
    return 'this build has no refresh_token grant (POST /token answers 400 unsupported_grant_type)';
  }
  if (res.status !== 200) throw new Error(`refresh probe: ${res.status} ${text}`);
  session.refresh_token = JSON.parse(text).refresh_token;
  return null;
}
