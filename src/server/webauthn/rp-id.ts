// Which WEBAUTHN_RP_ID values the original's WebAuthn library takes. It checks the id when it is set up
// for a ceremony, not at start, so a deployment with one it refuses starts there and fails every
// ceremony: here too (webauthn/relying-party.ts), with a start-up warning (config/original-corrections.ts).
import { isIP } from 'node:net';

/**
 * Why the original's library refuses `id` (not empty) as a relying party id, or null when it takes it: an
 * IP address (without an IPv6 zone), or a domain with no scheme, port, path, query or fragment, holding a
 * dot unless it is `localhost`.
 */
export function rpIdProblem(id: string): string | null {
  if (isIP(id) && !id.includes('%')) return null;
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  if (/[\x00-\x1f\x7f]/.test(id)) return 'it holds a control character';
  if (/[:/?#]/.test(id)) return 'it is not a bare domain (it has a scheme, port, path, query or fragment)';
  if (id !== 'localhost' && !id.includes('.')) return 'it is neither localhost nor a domain with a dot';
  return null;
}
