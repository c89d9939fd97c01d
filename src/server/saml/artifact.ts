// The HTTP-Artifact binding (docs/sso-saml.md#artifacts): an IdP may post a `SAMLart` reference instead of the
// response itself; the response is then fetched from the IdP over its back channel. As the original's
// library does it: a signed ArtifactResolve in a SOAP envelope, POSTed to the IdP metadata's SOAP
// ArtifactResolutionService; the ArtifactResponse must answer that request (InResponseTo), be recent, come
// from the IdP and report success. The Response it carries is then verified exactly as a posted one
// (verify-response.ts), so its own or its assertion's signature is what is trusted.
import { randomBytes } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import { readCappedText } from '../outbound-body.js';
import { AssertionRejected } from './verify-response.js';
import { children, escapeXml, parseXml, textOf, XmlProblem } from './xml.js';
import type { IdpMetadata } from './idp-metadata.js';
import type { SamlKey } from './keys.js';

const SOAP_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';
const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
/** How old an ArtifactResponse may be, as the original's library allows. */
const MAX_ISSUE_DELAY_MS = 90_000;
/** An artifact's answer holds one response; real ones are a few KiB. */
const ANSWER_MAX_BYTES = 1024 * 1024;

export interface ArtifactResolution {
  idp: IdpMetadata;
  spEntityId: string;
  /** the service provider's key, which signs the ArtifactResolve */
  key: SamlKey;
  timeoutSeconds: number;
}

/** The Response the artifact stands for, base64 as a browser would have posted it; AssertionRejected if none. */
export async function resolveArtifact(artifact: string, o: ArtifactResolution): Promise<string> {
  if (!o.idp.artifactResolutionUrl) throw new AssertionRejected('the IdP metadata names no SOAP ArtifactResolutionService');
  const id = `id-${randomBytes(20).toString('hex')}`;
  const answer = await post(o.idp.artifactResolutionUrl, soapEnvelope(signedArtifactResolve(id, artifact, o)), o.timeoutSeconds);
  const response = artifactResponse(answer, id, o.idp.entityId);
  return Buffer.from(new XMLSerializer().serializeToString(detached(response))).toString('base64');
}

const XMLNS = 'http://www.w3.org/2000/xmlns/';

/**
 * A copy of `element` holding every namespace declaration it inherits, as the original's library detaches an
 * element before checking its signature: a prefix declared around the Response and used only in text
 * (`xsi:type="xs:string"`, an InclusiveNamespaces prefix of its signature) stays bound once it stands alone.
 */
function detached(element: Element): Element {
  const copy = element.cloneNode(true) as Element;
  for (let node = element.parentNode; node && node.nodeType === 1; node = node.parentNode) {
    const attributes = (node as Element).attributes;
    for (let i = 0; i < attributes.length; i++) {
      const { name, value } = attributes.item(i)!;
      const declaration = name === 'xmlns' || name.startsWith('xmlns:');
      if (declaration && !copy.hasAttribute(name)) copy.setAttributeNS(XMLNS, name, value);
    }
  }
  return copy;
}

function signedArtifactResolve(id: string, artifact: string, o: ArtifactResolution): string {
  const xml =
    `<samlp:ArtifactResolve xmlns:samlp="${PROTOCOL}" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
    `ID="${id}" Version="2.0" IssueInstant="${new Date().toISOString()}">` +
    `<saml:Issuer Format="urn:oasis:names:tc:SAML:2.0:nameid-format:entity">${escapeXml(o.spEntityId)}</saml:Issuer>` +
    `<samlp:Artifact>${escapeXml(artifact)}</samlp:Artifact></samlp:ArtifactResolve>`;
  const signature = new SignedXml({
    privateKey: o.key.privateKeyPem,
    publicCert: o.key.certificatePem,
    // RSA-SHA1 with a SHA-1 digest, as the original's library signs every request (start.ts).
    signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signature.addReference({
    xpath: "/*[local-name(.)='ArtifactResolve']",
    digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
  });
  // The schema puts the Signature right after the Issuer.
  signature.computeSignature(xml, {
    location: { reference: "/*[local-name(.)='ArtifactResolve']/*[local-name(.)='Issuer']", action: 'after' },
  });
  return signature.getSignedXml();
}

const soapEnvelope = (body: string) =>
  `<soapenv:Envelope xmlns:soapenv="${SOAP_ENVELOPE}"><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`;

async function post(url: string, body: string, timeoutSeconds: number): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'text/xml' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
  } catch (err) {
    throw new AssertionRejected(`cannot resolve artifact: ${err instanceof Error ? err.message : 'unreachable'}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new AssertionRejected(`artifact resolution answered HTTP ${response.status}`);
  }
  try {
    return await readCappedText(
      response,
      ANSWER_MAX_BYTES,
      () => new AssertionRejected(`artifact resolution answered more than ${ANSWER_MAX_BYTES} bytes`),
    );
  } catch (err) {
    if (err instanceof AssertionRejected) throw err;
    throw new AssertionRejected('artifact resolution did not finish its answer');
  }
}

/** The Response inside the SOAP answer, once the ArtifactResponse around it has passed its checks. */
function artifactResponse(xml: string, requestId: string, idpEntityId: string): Element {
  let root: Element;
  try {
    root = parseXml(xml).documentElement!;
  } catch (err) {
    if (err instanceof XmlProblem) throw new AssertionRejected(`artifact resolution answered no XML: ${err.message}`);
    throw err;
  }
  if (root.namespaceURI !== SOAP_ENVELOPE || root.localName !== 'Envelope') throw new AssertionRejected('expected a SOAP Envelope');
  const answer = only(only(root, 'Body', SOAP_ENVELOPE), 'ArtifactResponse', PROTOCOL);
  if (answer.getAttribute('InResponseTo') !== requestId) throw new AssertionRejected('InResponseTo does not match the artifact request ID');
  const issued = Date.parse(answer.getAttribute('IssueInstant') ?? '');
  if (Number.isNaN(issued) || issued + MAX_ISSUE_DELAY_MS < Date.now()) throw new AssertionRejected('the ArtifactResponse has expired');
  const issuer = children(answer, 'Issuer')[0];
  if (issuer && textOf(issuer) !== idpEntityId) throw new AssertionRejected(`the ArtifactResponse is not from ${idpEntityId}`);
  const statusEl = children(answer, 'Status')[0];
  const status = statusEl ? children(statusEl, 'StatusCode')[0]?.getAttribute('Value') : null;
  if (status !== SUCCESS) throw new AssertionRejected(`the ArtifactResponse reports ${status ?? 'no status'}`);
  return only(answer, 'Response', PROTOCOL);
}

function only(parent: Element, localName: string, namespace: string): Element {
  const found = children(parent, localName).filter((el) => el.namespaceURI === namespace);
  if (found.length !== 1) throw new AssertionRejected(`expected one ${localName} in ${parent.localName}, found ${found.length}`);
  return found[0];
}
