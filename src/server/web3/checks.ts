// What a verified sign-in message must also say (docs/web3.md#the-checks), in the original's order: an
// HTTPS URI (any scheme on localhost) that is the site or an allowed redirect URL, a domain that is the
// URI's host and itself allowed, and a time window: Not Before passed, Expiration Time not passed, and
// Issued At within the chain's maximum validity of now, either way. Refusals are OAuth-style invalid_grant.
import { OAuthRefusal } from '../grants/oauth-refusal.js';
import type { RedirectCheck } from '../http/redirect-target.js';
import type { SignInMessage } from './message.js';
import { ZERO_TIME } from '../go-time.js';

const refuse = (description: string) => new OAuthRefusal('invalid_grant', description);

export function checkAudience(message: SignInMessage, title: string, redirect: RedirectCheck): void {
  const { uri, domain } = message;
  const localhost = uri.hostname === 'localhost';
  if (uri.scheme !== 'https' && !localhost) throw refuse(`Signed ${title} message is using URI which does not use HTTPS`);
  if (redirect(uri.text) === null) {
    throw refuse(`Signed ${title} message is using URI which is not allowed on this server, message was signed for another app`);
  }
  if (!localhost && (uri.host !== domain || redirect(`https://${domain}/`) === null)) {
    throw refuse(`Signed ${title} message is using a Domain that does not match the one in URI which is not allowed on this server`);
  }
}

/**
 * The time window. Unlike the original, an Ethereum message's Expiration Time counts even without a
 * Not Before line (docs/differences.md#deliberate-departures).
 */
export function checkTimes(message: SignInMessage, title: string, maximumValiditySeconds: number, now: number): void {
  const { notBefore, expirationTime, issuedAt } = message;
  if (notBefore !== null && notBefore !== ZERO_TIME && now < notBefore) throw refuse(`Signed ${title} message becomes valid in the future`);
  if (expirationTime !== null && expirationTime !== ZERO_TIME && now > expirationTime) throw refuse(`Signed ${title} message is expired`);
  const validity = maximumValiditySeconds * 1000;
  if (now > issuedAt + validity) throw refuse(`${title} message was issued too long ago`);
  if (now < issuedAt - validity) throw refuse(`${title} message was issued too far in the future`);
}
