// What a verified assertion says about the user (docs/sso-saml.md#users), read as the original reads it:
// the persistent user ID (the subject-id attribute, else a NameID that is not transient), the email (the
// mapping's, else the usual attributes, else an emailAddress NameID) and the claims of the provider's
// attribute_mapping. Attributes match by Name or FriendlyName, ignoring case.
import type { Profile } from '@node-saml/node-saml';
import type { AttributeMapping } from '../../db/sso-providers.js';

const SUBJECT_ID = 'urn:oasis:names:tc:SAML:attribute:subject-id';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const TRANSIENT_FORMAT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
const EMAIL_ATTRIBUTES = [
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'http://schemas.xmlsoap.org/claims/EmailAddress',
  'mail',
  'Mail',
  'email',
];

interface Attribute {
  name: string;
  friendlyName: string;
  values: string[];
}

export interface ReadAssertion {
  userId: string;
  email: string;
  claims: Record<string, unknown>;
  /** AuthnStatement SessionNotOnOrAfter: when the IdP wants the session to end */
  sessionNotAfter: Date | null;
}

type Node = Record<string, unknown> & { $?: Record<string, string>; _?: string };
const list = (v: unknown): Node[] => (Array.isArray(v) ? (v as Node[]) : []);
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof (v as Node)?._ === 'string' ? (v as Node)._! : '');

export function readAssertion(profile: Profile, mapping: AttributeMapping | null): ReadAssertion {
  const assertion = ((profile.getAssertion?.() ?? {}) as { Assertion?: Node }).Assertion ?? {};
  const attributes: Attribute[] = list(assertion.AttributeStatement).flatMap((statement) =>
    list(statement.Attribute).map((a) => ({
      name: a.$?.Name ?? '',
      friendlyName: a.$?.FriendlyName ?? '',
      values: list(a.AttributeValue).map(text),
    })),
  );
  const valuesOf = (name: string) =>
    attributes
      .filter((a) => a.name.toLowerCase() === name.toLowerCase() || a.friendlyName.toLowerCase() === name.toLowerCase())
      .flatMap((a) => a.values);

  const claims = mapClaims(mapping, valuesOf);
  const mapped = typeof claims.email === 'string' ? claims.email : '';
  const email = mapped || EMAIL_ATTRIBUTES.map((n) => valuesOf(n).find((v) => v !== '')).find(Boolean) || emailNameId(profile);
  const subjectIds = valuesOf(SUBJECT_ID);
  const notAfter = list(assertion.AuthnStatement)
    .map((s) => s.$?.SessionNotOnOrAfter)
    .find(Boolean);
  return {
    // As the original: the first subject-id value, even an empty one (refused later as no user id); the
    // persistent NameID only when the assertion has no subject-id value at all.
    userId: subjectIds.length ? subjectIds[0] : persistentNameId(profile),
    email,
    claims,
    sessionNotAfter: notAfter && !Number.isNaN(Date.parse(notAfter)) ? new Date(notAfter) : null,
  };
}

function persistentNameId(profile: Profile): string {
  const value = profile.nameID ?? '';
  if (!value) return '';
  if (profile.nameIDFormat === EMAIL_FORMAT) return value.trim().toLowerCase();
  return profile.nameIDFormat === TRANSIENT_FORMAT ? '' : value;
}

const emailNameId = (profile: Profile): string => (profile.nameIDFormat === EMAIL_FORMAT ? (profile.nameID ?? '') : '');

/** The attribute_mapping's claims: the first name with a value wins (all values with array: true), else the default. */
function mapClaims(mapping: AttributeMapping | null, valuesOf: (name: string) => string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  for (const [key, rule] of Object.entries(mapping?.keys ?? {})) {
    const names = [...(rule.name ? [rule.name] : []), ...(rule.names ?? [])];
    for (const name of names) {
      const values = valuesOf(name).filter((v) => v !== '');
      if (values.length === 0) continue;
      claims[key] = rule.array ? values : values[0];
      break;
    }
    if (!(key in claims) && rule.default !== undefined && rule.default !== null) claims[key] = rule.default;
  }
  return claims;
}
