// The checks the original's SAML library makes on a response that node-saml does not make
// (docs/sso-saml.md#what-the-acs-checks), run on a response node-saml has already verified:
// - the Response's top-level StatusCode is Success (node-saml reads the Status only of a response without
//   an assertion, so an IdP's failure answer that still carries a signed assertion would sign in);
// - the Response's Destination is our ACS URL when the Response is signed or names one;
// - the Response's Issuer, when present, is the provider;
// - the Response and the Assertion were issued less than 90 seconds ago (no clock skew allowed here,
//   as in the original);
// - the Assertion names us as its audience in one of its AudienceRestrictions, or has none (the original's
//   library accepts an assertion without one; node-saml would refuse it, and requires every restriction);
// - every SubjectConfirmationData names our ACS URL as Recipient, has a NotOnOrAfter (three minutes of
//   skew) and, in an SP-initiated flow, answers the AuthnRequest.
// They read the parsed Response (its root is the element whose signature node-saml checked) and
// node-saml's parse of the verified assertion, never the raw text.
import type { Element } from '@xmldom/xmldom';
import { children, textOf } from './xml.js';

/** How long after its IssueInstant a response or assertion is accepted (also how long its ID is kept, verify-response.ts). */
export const MAX_ISSUE_DELAY_MS = 90_000;
/** Clock skew allowed on the subject confirmation's NotOnOrAfter. */
const MAX_CLOCK_SKEW_MS = 180_000;
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

type Node = Record<string, unknown> & { $?: Record<string, string> };
const list = (v: unknown): Node[] => (Array.isArray(v) ? (v as Node[]) : []);

export interface ResponseExpectations {
  acsUrl: string;
  idpEntityId: string;
  /** our entity ID */
  spEntityId: string;
  /** the AuthnRequest ID of an SP-initiated flow; null for an IdP-initiated one */
  requestId: string | null;
}

/** Why the response fails the checks, or null when it passes. */
export function responseProblem(response: Element, assertion: Node, e: ResponseExpectations, now = Date.now()): string | null {
  const status = topLevelStatus(response);
  if (status !== SUCCESS) return `response Status is ${status ?? 'missing'}`;
  const signed = children(response, 'Signature').some((s) => s.namespaceURI === DSIG);
  const destination = response.getAttribute('Destination') ?? '';
  if ((signed || destination !== '') && destination !== e.acsUrl) return `Destination ${destination} is not ${e.acsUrl}`;
  const issuer = children(response, 'Issuer')[0];
  if (issuer && textOf(issuer) !== e.idpEntityId) return `response issued by ${textOf(issuer)}`;
  if (tooOld(response.getAttribute('IssueInstant'), now)) return 'response IssueInstant too old';
  if (tooOld(assertion.$?.IssueInstant, now)) return 'assertion IssueInstant too old';
  const restrictions = list(assertion.Conditions).flatMap((c) => list(c.AudienceRestriction));
  const namesUs = (r: Node) => (Array.isArray(r.Audience) ? (r.Audience as unknown[]) : []).some((a) => audienceText(a) === e.spEntityId);
  if (restrictions.length > 0 && !restrictions.some(namesUs)) return `assertion is not for audience ${e.spEntityId}`;

  for (const subject of list(assertion.Subject)) {
    for (const confirmation of list(subject.SubjectConfirmation)) {
      const data = list(confirmation.SubjectConfirmationData)[0]?.$ ?? {};
      if (data.Recipient !== e.acsUrl) return `SubjectConfirmationData Recipient ${data.Recipient ?? ''} is not ${e.acsUrl}`;
      const notOnOrAfter = Date.parse(data.NotOnOrAfter ?? '');
      if (!(notOnOrAfter + MAX_CLOCK_SKEW_MS >= now)) return 'SubjectConfirmationData expired';
      if (e.requestId !== null && data.InResponseTo !== e.requestId) return 'SubjectConfirmationData answers another request';
    }
  }
  return null;
}

/** The Value of the Response's <Status><StatusCode> (the second-level code inside it only refines a failure). */
function topLevelStatus(response: Element): string | null {
  const inProtocol = (parent: Element, name: string) => children(parent, name).find((el) => el.namespaceURI === PROTOCOL);
  const status = inProtocol(response, 'Status');
  const code = status && inProtocol(status, 'StatusCode');
  return code ? code.getAttribute('Value') : null;
}

/** An <Audience>'s text as xml2js gives it: the string, or its `_` when the element has attributes. */
function audienceText(a: unknown): string | undefined {
  if (typeof a === 'string') return a;
  const text = (a as { _?: unknown } | null)?._;
  return typeof text === 'string' ? text : undefined;
}

/** An IssueInstant missing, unreadable or more than MAX_ISSUE_DELAY_MS ago. */
function tooOld(issueInstant: string | null | undefined, now: number): boolean {
  const at = Date.parse(issueInstant ?? '');
  return !(at + MAX_ISSUE_DELAY_MS >= now);
}
