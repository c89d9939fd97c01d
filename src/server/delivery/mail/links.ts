// The ConfirmationURL put into mails (and returned as action_link by /admin/generate_link). Its shape is
// a wire format: clients and existing email templates parse it, so it follows the original service
// exactly (docs/one-time-codes-and-mail.md#links): `<base resolved with MAILER_URLPATHS_X>?token=<hash>&type=<t>&redirect_to=<url>`.
import type { Config } from '../../config/types.js';
import { goQueryEscape } from '../../http/go-url.js';

/** The mails that carry a verification link (reauthentication carries only a code). */
export type LinkKind = 'invite' | 'confirmation' | 'recovery' | 'magicLink' | 'emailChange';

/** The `type` query value of each link, as GET /verify expects it. Frozen wire names. */
export const VERIFICATION_TYPES: Readonly<Record<LinkKind, string>> = Object.freeze({
  invite: 'invite',
  confirmation: 'signup',
  recovery: 'recovery',
  magicLink: 'magiclink',
  emailChange: 'email_change',
});

/** The configured URL path of a link. Magic links use the RECOVERY path, as in the original. */
export function linkPathFor(urlPaths: Config['mailer']['urlPaths'], kind: LinkKind): string {
  return kind === 'magicLink' ? urlPaths.recovery : urlPaths[kind];
}

export interface ConfirmationUrlParts {
  /** API_EXTERNAL_URL */
  externalUrl: string;
  /** MAILER_URLPATHS_X: an absolute path replaces the base URL's path, a relative one is resolved */
  path: string;
  /** the stored token hash (with its `pkce_` prefix in PKCE flows) */
  tokenHash: string;
  type: LinkKind;
  redirectTo: string;
}

export function buildConfirmationUrl({ externalUrl, path, tokenHash, type, redirectTo }: ConfirmationUrlParts): string {
  // RFC 3986 reference resolution, as Go's url.ResolveReference does it: '/verify' on
  // 'https://x/auth/v1' gives 'https://x/verify' (Supabase therefore sets '/auth/v1/verify').
  const url = new URL(path || '/verify', externalUrl);
  url.search = '';
  url.hash = '';
  const query =
    `token=${goQueryEscape(tokenHash)}&type=${goQueryEscape(VERIFICATION_TYPES[type])}` + `&redirect_to=${encodeRedirectTo(redirectTo)}`;
  return `${url.href}?${query}`;
}

// The original leaves redirect_to as is unless it holds a character that would break the query apart
// (&, = or #); existing apps compare the raw value, so we do the same. `%` and `+` are escaped too: the
// query decoder of GET /verify would otherwise turn them into other characters than the ones checked.
function encodeRedirectTo(redirectTo: string): string {
  return /[&=#%+]/.test(redirectTo) ? goQueryEscape(redirectTo) : redirectTo;
}
