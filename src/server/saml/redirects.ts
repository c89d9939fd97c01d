// The ACS's answer to a finished implicit flow: 302 to the target with the session appended as a fragment
// (the target's own kept), the fields the original's redirect carries (clients read them with detectSessionInUrl).
import type { ApiResponse } from '../http/types.js';
import type { TokenResponse } from '../sessions/issue.js';
import { withSessionFragment } from '../http/session-fragment.js';

export function tokenFragmentRedirect(target: string, s: TokenResponse): ApiResponse {
  const fragment = {
    access_token: s.access_token,
    expires_at: String(s.expires_at),
    expires_in: String(s.expires_in),
    refresh_token: s.refresh_token,
    sb: '', // the original's mark of its redirects, which clients may look for
    token_type: 'bearer',
  };
  return { status: 302, headers: { Location: withSessionFragment(target, fragment) } };
}
