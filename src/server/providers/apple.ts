// Sign in with Apple: OpenID Connect by discovery of https://appleid.apple.com (EXTERNAL_APPLE_URL replaces
// the issuer for tests). Apple answers the callback with a form POST (response_mode=form_post) and sends
// the person's name only once, in the `user` form field of the first sign-in.
import { discoveredEndpoints, oidcProvider } from './oidc.js';

export const apple = oidcProvider({
  name: 'apple',
  defaultScopes: ['email', 'name'],
  endpoints: (rt) => discoveredEndpoints(rt, rt.config.url || 'https://appleid.apple.com'),
  // Apple requires form_post whenever scopes are requested.
  authorizationParams: () => ({ response_mode: 'form_post' }),
  fromForm(form) {
    const raw = form.get('user');
    if (!raw) return {};
    try {
      const user = JSON.parse(raw) as { name?: { firstName?: string; lastName?: string } };
      const name = [user.name?.firstName, user.name?.lastName].filter((x) => typeof x === 'string' && x).join(' ');
      return name ? { name } : {};
    } catch {
      return {}; // a malformed `user` field only costs the name
    }
  },
});
