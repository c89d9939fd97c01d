// What an identity provider says about a person (ID token claims, userinfo and user API answers, SAML
// attributes) made storable before anything reads it (docs/oauth.md#what-is-stored). PostgreSQL's text and
// jsonb hold neither U+0000 nor a lone UTF-16 surrogate, and a provider's JSON may carry both (as \u0000,
// \ud800): passed on raw, a profile holding one failed its sign-in as a 500 at the first query. Request
// bodies are cleaned as they are parsed (http/well-formed.ts); a provider's answers are not request bodies.
//   - A lone surrogate becomes U+FFFD everywhere, as the original's Go JSON decoder reads it.
//   - A NUL in a display claim (a name, a custom claim, a key) becomes U+FFFD: the person still signs in.
//   - A NUL in what finds an account (the subject, an email address, the sub, email or phone claim) refuses
//     the sign-in: dropping or replacing it could make two different identities one.
import type { ExternalProfile } from './types.js';

/** The profile names an account with a NUL in it; `what` says where (for the log only). */
export class UnstorableProfile extends Error {
  constructor(readonly what: string) {
    super(`the provider's ${what} holds a NUL character`);
    this.name = 'UnstorableProfile';
  }
}

/** Claims an account is found or linked by: a NUL in one refuses the sign-in instead of being replaced. */
const IDENTIFYING_CLAIMS = ['sub', 'email', 'phone'];

const NUL = '\u0000';

/** Every string and object key of `value` storable: lone surrogates and NULs become U+FFFD. */
export function storableClaims(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll(NUL, '\ufffd').toWellFormed();
  if (Array.isArray(value)) return value.map(storableClaims);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[storableClaims(key) as string] = storableClaims(inner);
  return out;
}

/** An identifier as stored (lone surrogates as U+FFFD); a NUL in it is an UnstorableProfile naming `what`. */
export function storableIdentifier(value: string, what: string): string {
  if (value.includes(NUL)) throw new UnstorableProfile(what);
  return value.toWellFormed();
}

/**
 * The profile as it may be stored and looked up; throws UnstorableProfile when an identifier holds a NUL.
 * A profile this made is answered as it is: the id_token grant checks the token's person in its own words
 * before oauth/linking.ts checks every sign-in's, and the claims are walked once.
 */
export function storableProfile(profile: ExternalProfile): ExternalProfile {
  if (madeStorable.has(profile)) return profile;
  const subject = storableIdentifier(profile.subject, 'subject');
  const emails = profile.emails.map((e) => ({ ...e, email: storableIdentifier(e.email, 'email address') }));
  for (const key of IDENTIFYING_CLAIMS) {
    const claim = profile.claims[key];
    if (typeof claim === 'string') storableIdentifier(claim, `${key} claim`);
  }
  const claims = storableClaims(profile.claims) as Record<string, unknown>;
  const storable = { ...profile, subject, emails, claims };
  madeStorable.add(storable);
  return storable;
}
const madeStorable = new WeakSet<ExternalProfile>();

/** SAML's side (saml/acs.ts): the assertion's user ID and email are identifiers, its mapped attributes display claims. */
export function storableAssertion<T extends { userId: string; email: string; claims: Record<string, unknown> }>(read: T): T {
  const userId = storableIdentifier(read.userId, 'user ID');
  const email = storableIdentifier(read.email, 'email address');
  return { ...read, userId, email, claims: storableClaims(read.claims) as Record<string, unknown> };
}
