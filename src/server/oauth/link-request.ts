// What signing in with an external profile is asked (LinkRequest) and what it decides (Linked), shared by the
// decision (oauth/linking.ts) and the writes it makes (oauth/identity-link.ts, oauth/new-account.ts).
import type { UserRow } from '../../db/users.js';
import type { ExternalEmail, ExternalProfile } from '../providers/types.js';
import type { HookRequest } from '../hooks/invoke.js';
import type { AuditRequest } from '../../db/audit-log.js';

export interface LinkRequest {
  provider: string;
  profile: ExternalProfile;
  /** the signed-in user who started GET /user/identities/authorize */
  linkingTargetId: string | null;
  /** the invite link's token passed to /authorize: the invitee accepts the invite with this provider */
  inviteToken?: string | null;
  emailOptional: boolean;
  aud: string;
  /** the request signing in: the user-created hooks are called for it (docs/hooks.md#before-user-created), its audit entries logged with it */
  hookRequest: HookRequest & AuditRequest;
}

export interface Linked {
  user: UserRow;
  /**
   * How the sign-in is audited at the callback (or the id_token grant), as the original decides it: user_signedup
   * when the provider's address confirmed the account (a new one, or one still unconfirmed), login otherwise
   * (a new account without an address too); none while the address awaits its confirmation mail, and none for
   * a link (identity_linked) or an invite (invite_accepted), which are audited as such.
   */
  audit: 'user_signedup' | 'login' | null;
  /** the user's email is unconfirmed and the provider did not verify it: the confirmation mail is due (oauth/unverified.ts) */
  needsConfirmation: boolean;
  /** a signed-in user linked this identity: its notification is due (delivery/notifications.ts) */
  linked: boolean;
  /** with needsConfirmation: the error the sign-in ends with after the mail (oauth/unverified.ts) */
  refusal?: 'provider_email_needs_verification' | 'link_email_not_confirmed';
}

/**
 * The address a new account takes, as the original's linking decision picks it: the last one the provider
 * marked primary, or none (then the account has no address, and an unconfirmed one waits for the provider
 * to verify one), never another address the profile happens to list first.
 */
export function candidateEmail(profile: ExternalProfile): ExternalEmail | undefined {
  return profile.emails.filter((e) => e.primary).at(-1);
}

/** The address identity_data names, and whose flag says whether the provider verified it: the primary one, else the last reported. */
export function namedEmail(profile: ExternalProfile): ExternalEmail | undefined {
  return profile.emails.find((e) => e.primary) ?? profile.emails.at(-1);
}
