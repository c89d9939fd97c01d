// Verifying a posted SAMLResponse (docs/sso-saml.md#what-the-acs-checks) with node-saml, never by hand: the
// signature (of the Response or of its one Assertion) against the IdP metadata's signing certificates,
// one assertion only (node-saml refuses more, the usual wrapping vector), the Conditions' time window and
// our audience, and InResponseTo: in an SP-initiated flow it must be the AuthnRequest ID kept in the relay
// state; in an IdP-initiated one it is not looked at, as the original does not (some IdPs, Rippling among
// them, send one). Then the assertion's Issuer must be the provider, and the checks node-saml does not
// make but the original's library does (saml/response-checks.ts) must pass. The assertion's ID is handed
// back with the profile, for the ACS to accept each assertion once (docs/sso-saml.md#replay).
import { SAML, ValidateInResponseTo, type CacheProvider, type Profile } from '@node-saml/node-saml';
import { parseXml, XmlProblem } from './xml.js';
import { MAX_ISSUE_DELAY_MS, responseProblem } from './response-checks.js';
import type { IdpMetadata } from './idp-metadata.js';
import type { SamlKey } from './keys.js';
import type { SpUrls } from './sp.js';

export class AssertionRejected extends Error {}

export interface VerifyOptions {
  idp: IdpMetadata;
  sp: SpUrls;
  /** the AuthnRequest ID of an SP-initiated flow; null for an IdP-initiated one */
  requestId: string | null;
  /** the key that decrypts an EncryptedAssertion (SAML_ALLOW_ENCRYPTED_ASSERTIONS), else null */
  decryptionKey: SamlKey | null;
}

/** Clock skew tolerated between the IdP and us, as crewjam/saml (the original's library) allows. */
const CLOCK_SKEW_MS = 180_000;

/** The longest assertion ID kept (the check on saml_assertion_uses.assertion_id, sql/00019_saml_assertion_uses.sql). */
const MAX_ASSERTION_ID_LENGTH = 1024;

export interface VerifiedResponse {
  profile: Profile;
  /** the verified assertion's ID attribute */
  assertionId: string;
  /** until when the checks would still accept this assertion: its ID must be remembered that long */
  usableUntil: Date;
}

export async function verifyResponse(samlResponse: string, o: VerifyOptions): Promise<VerifiedResponse> {
  const saml = new SAML({
    idpCert: (done) => done(null, o.idp.signingCerts),
    issuer: o.sp.entityId,
    callbackUrl: o.sp.acsUrl,
    audience: false, // checked in responseProblem with the original's rule (none, or any restriction naming us)
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false, // either signature suffices, as in the original; node-saml requires one of them
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    validateInResponseTo: o.requestId ? ValidateInResponseTo.always : ValidateInResponseTo.never,
    requestIdExpirationPeriodMs: 24 * 3600 * 1000, // the relay state's own validity period is checked before
    cacheProvider: requestCache(o.requestId),
    ...(o.decryptionKey ? { decryptionPvk: o.decryptionKey.privateKeyPem } : {}),
  });
  let profile: Profile | null;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    throw new AssertionRejected(err instanceof Error ? err.message : 'invalid response');
  }
  if (!profile) throw new AssertionRejected('no assertion');
  if (profile.issuer !== o.idp.entityId) throw new AssertionRejected(`assertion issued by ${profile.issuer}, not ${o.idp.entityId}`);
  const assertion =
    ((profile.getAssertion?.() ?? {}) as { Assertion?: Record<string, unknown> & { $?: Record<string, string> } }).Assertion ?? {};
  const problem = responseProblem(parsedResponse(samlResponse), assertion, {
    acsUrl: o.sp.acsUrl,
    idpEntityId: o.idp.entityId,
    spEntityId: o.sp.entityId,
    requestId: o.requestId,
  });
  if (problem) throw new AssertionRejected(problem);
  return { profile, ...assertionUse(assertion) };
}

/**
 * The assertion's ID and until when the IssueInstant check accepts it (it passed, so the instant is
 * readable): from the later of now and the IssueInstant, as an instant a little ahead of our clock is
 * accepted for longer. SAML requires the ID; without one (or with one too long to keep, or holding a NUL
 * PostgreSQL cannot store) the assertion could not be refused a second time, so it is refused now.
 */
function assertionUse(assertion: { $?: Record<string, string> }): Omit<VerifiedResponse, 'profile'> {
  const id = assertion.$?.ID;
  if (typeof id !== 'string' || id === '') throw new AssertionRejected('assertion has no ID');
  if (id.length > MAX_ASSERTION_ID_LENGTH || id.includes('\0')) throw new AssertionRejected('assertion ID unusable');
  const issued = Date.parse(assertion.$?.IssueInstant ?? '');
  return { assertionId: id, usableUntil: new Date(Math.max(Date.now(), issued) + MAX_ISSUE_DELAY_MS) };
}

/** The Response element node-saml verified, parsed again from the same bytes (it does not hand its own out). */
function parsedResponse(samlResponse: string) {
  try {
    return parseXml(Buffer.from(samlResponse, 'base64').toString('utf8')).documentElement!;
  } catch (err) {
    if (err instanceof XmlProblem) throw new AssertionRejected(err.message);
    throw err;
  }
}

/** The one request ID this response may answer; nothing is ever stored. */
function requestCache(requestId: string | null): CacheProvider {
  const issued = new Date().toISOString();
  return {
    saveAsync: () => Promise.resolve(null),
    getAsync: (key) => Promise.resolve(requestId !== null && key === requestId ? issued : null),
    removeAsync: () => Promise.resolve(null),
  };
}
