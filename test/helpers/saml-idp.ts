// A SAML identity provider for tests: its own RSA key and self-signed certificate made here, its metadata,
// the reading of the AuthnRequest a browser brings it (inflated, its redirect signature checked against the
// service's metadata certificate), and responses built as XML and signed with xml-crypto, the library real
// Node IdPs sign with. Only the test decides what a response says; the signing is never hand-made.
import { generateKeyPairSync, createVerify, randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import forge from 'node-forge';
import { SignedXml } from 'xml-crypto';
import xmlenc from 'xml-encryption';
import { DOMParser } from '@xmldom/xmldom';

export interface KeyPair {
  privateKeyPem: string;
  certificatePem: string;
  certificateBase64: string;
}

/** An RSA key and a self-signed certificate for it. */
export function makeKeyPair(commonName: string): KeyPair {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const key = forge.pki.privateKeyFromPem(privateKeyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer([{ name: 'commonName', value: commonName }]);
  cert.sign(key, forge.md.sha256.create());
  const certificatePem = forge.pki.certificateToPem(cert);
  const certificateBase64 = forge.util.encode64(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes());
  return { privateKeyPem, certificatePem, certificateBase64 };
}

/** A SAML_PRIVATE_KEY value: base64 of a DER PKCS#1 RSA key. */
export function spPrivateKey(bits = 2048): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return privateKey.export({ format: 'der', type: 'pkcs1' }).toString('base64');
}

export interface AuthnRequestSeen {
  id: string;
  issuer: string;
  acsUrl: string;
  nameIdFormat: string | null;
  relayState: string;
  /** the redirect binding's signature verified against this certificate */
  signatureValid: boolean;
}

export interface Assertion {
  /** defaults: the IdP's entity ID */
  issuer?: string;
  nameId?: string;
  nameIdFormat?: string;
  inResponseTo?: string | null;
  /** default: the SP's entity ID; an array: one AudienceRestriction for each; null: no AudienceRestriction */
  audience?: string | string[] | null;
  /** the SubjectConfirmationData Recipient (default: the SP's ACS URL) */
  recipient?: string;
  /** the Response Destination (default: the SP's ACS URL); null leaves it out */
  destination?: string | null;
  /** the Response's top-level StatusCode Value (default: Success); `nested` adds a second-level StatusCode */
  status?: { value: string; nested?: string };
  /** the Response's and the Assertion's IssueInstant (default: now) */
  issueInstant?: Date;
  notBefore?: Date;
  notOnOrAfter?: Date;
  sessionNotOnOrAfter?: Date;
  attributes?: Array<{ name: string; friendlyName?: string; values: string[] }>;
  /** attribute values typed `xsi:type="xs:string"`, as OpenSAML writes them; `xsi` and `xs` must then be declared around the response */
  typedValues?: boolean;
}

export class TestIdp {
  readonly keys = makeKeyPair('Test IdP');
  readonly ssoUrl: string;
  constructor(
    readonly entityId = `https://idp-${randomUUID().slice(0, 8)}.example.test/metadata`,
    keys?: KeyPair,
  ) {
    if (keys) this.keys = keys;
    this.ssoUrl = `${new URL(this.entityId).origin}/sso`;
  }

  metadata(extra: { validUntil?: string; cacheDuration?: string; artifactResolutionUrl?: string } = {}): string {
    const attrs = [
      extra.validUntil ? ` validUntil="${extra.validUntil}"` : '',
      extra.cacheDuration ? ` cacheDuration="${extra.cacheDuration}"` : '',
    ].join('');
    return (
      `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${this.entityId}"${attrs}>` +
      '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">' +
      '<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>' +
      `<ds:X509Certificate>${this.keys.certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>` +
      (extra.artifactResolutionUrl
        ? `<md:ArtifactResolutionService Binding="urn:oasis:names:tc:SAML:2.0:bindings:SOAP" Location="${extra.artifactResolutionUrl}" index="0"/>`
        : '') +
      '<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>' +
      `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${this.ssoUrl}"/>` +
      `<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${this.ssoUrl}"/>` +
      '</md:IDPSSODescriptor></md:EntityDescriptor>'
    );
  }

  /** What the browser brings to the IdP: the AuthnRequest of the URL the service sent it to. */
  readRequest(url: string, spCertificatePem: string): AuthnRequestSeen {
    const u = new URL(url);
    const samlRequest = u.searchParams.get('SAMLRequest') ?? '';
    const xml = inflateRawSync(Buffer.from(samlRequest, 'base64')).toString('utf8');
    const root = new DOMParser().parseFromString(xml, 'text/xml').documentElement!;
    const policy = root.getElementsByTagNameNS('*', 'NameIDPolicy')[0];
    // The signed octets are the raw query parameters in this order (SAML bindings §3.4.4.1).
    const raw = Object.fromEntries(
      u.search
        .slice(1)
        .split('&')
        .map((p) => [p.split('=')[0], p.slice(p.indexOf('=') + 1)]),
    );
    const signed = ['SAMLRequest', 'RelayState', 'SigAlg']
      .filter((k) => raw[k] !== undefined)
      .map((k) => `${k}=${raw[k]}`)
      .join('&');
    const verifier = createVerify('RSA-SHA1');
    verifier.update(signed);
    const signature = u.searchParams.get('Signature') ?? '';
    return {
      id: root.getAttribute('ID') ?? '',
      issuer: root.getElementsByTagNameNS('*', 'Issuer')[0]?.textContent ?? '',
      acsUrl: root.getAttribute('AssertionConsumerServiceURL') ?? '',
      nameIdFormat: policy?.getAttribute('Format') ?? null,
      relayState: u.searchParams.get('RelayState') ?? '',
      signatureValid:
        // RSA-SHA1, as the original's SAML library signs its requests.
        u.searchParams.get('SigAlg') === 'http://www.w3.org/2000/09/xmldsig#rsa-sha1' &&
        verifier.verify(spCertificatePem, Buffer.from(signature, 'base64')),
    };
  }

  /** The unsigned XML of a Response holding one Assertion. */
  responseXml(sp: { entityId: string; acsUrl: string }, a: Assertion): string {
    const now = new Date();
    const issued = (a.issueInstant ?? now).toISOString();
    const destination = a.destination === null ? '' : ` Destination="${a.destination ?? sp.acsUrl}"`;
    const notBefore = (a.notBefore ?? new Date(now.getTime() - 60_000)).toISOString();
    const notOnOrAfter = (a.notOnOrAfter ?? new Date(now.getTime() + 300_000)).toISOString();
    const irt = a.inResponseTo ? ` InResponseTo="${a.inResponseTo}"` : '';
    const issuer = a.issuer ?? this.entityId;
    const attributes = (a.attributes ?? [])
      .map(
        (at) =>
          `<saml:Attribute Name="${at.name}"${at.friendlyName ? ` FriendlyName="${at.friendlyName}"` : ''}>` +
          at.values.map((v) => `<saml:AttributeValue${a.typedValues ? ' xsi:type="xs:string"' : ''}>${v}</saml:AttributeValue>`).join('') +
          '</saml:Attribute>',
      )
      .join('');
    const session = a.sessionNotOnOrAfter ? ` SessionNotOnOrAfter="${a.sessionNotOnOrAfter.toISOString()}"` : '';
    return (
      `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
      `ID="_r${randomUUID().replace(/-/g, '')}" Version="2.0" IssueInstant="${issued}"${destination}${irt}>` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      statusXml(a.status) +
      `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_a${randomUUID().replace(/-/g, '')}" Version="2.0" IssueInstant="${issued}">` +
      `<saml:Issuer>${issuer}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="${a.nameIdFormat ?? 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'}">${a.nameId ?? 'user-1'}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
      `<saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${a.recipient ?? sp.acsUrl}"${irt}/>` +
      '</saml:SubjectConfirmation></saml:Subject>' +
      `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}">` +
      audienceRestrictions(a.audience === undefined ? sp.entityId : a.audience) +
      '</saml:Conditions>' +
      `<saml:AuthnStatement AuthnInstant="${now.toISOString()}"${session}><saml:AuthnContext>` +
      '<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>' +
      '</saml:AuthnContext></saml:AuthnStatement>' +
      (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '') +
      '</saml:Assertion></samlp:Response>'
    );
  }

  /**
   * Signs the Assertion (or the whole Response) of `xml` with `key` (this IdP's by default); `prefixList`: the
   * exclusive canonicalisation's InclusiveNamespaces, as OpenSAML names the prefixes used in attribute values.
   */
  sign(xml: string, what: 'Assertion' | 'Response' = 'Assertion', key: KeyPair = this.keys, prefixList?: string[]): string {
    const sig = new SignedXml({
      privateKey: key.privateKeyPem,
      publicCert: key.certificatePem,
      signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
      canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    });
    const xpath = what === 'Assertion' ? "//*[local-name(.)='Assertion']" : "/*[local-name(.)='Response']";
    sig.addReference({
      xpath,
      digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
      transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
      ...(prefixList ? { inclusiveNamespacesPrefixList: prefixList } : {}),
    });
    sig.computeSignature(xml, { location: { reference: `${xpath}/*[local-name(.)='Issuer']`, action: 'after' } });
    return sig.getSignedXml();
  }

  /** A signed response, base64 as the browser posts it. */
  response(sp: { entityId: string; acsUrl: string }, a: Assertion): string {
    return Buffer.from(this.sign(this.responseXml(sp, a))).toString('base64');
  }
}

/**
 * A signed response whose Assertion is encrypted (xml-encryption: AES-256-CBC, the key wrapped with RSA-OAEP)
 * to the SP certificate `spCertificatePem`, as an IdP does with the encryption key of the SP metadata.
 */
export async function encryptedResponse(
  idp: TestIdp,
  sp: { entityId: string; acsUrl: string },
  a: Assertion,
  spCertificatePem: string,
): Promise<string> {
  const signed = idp.sign(idp.responseXml(sp, a));
  const assertion = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)![0];
  const encrypted = await new Promise<string>((resolve, reject) =>
    xmlenc.encrypt(
      assertion,
      {
        rsa_pub: spCertificatePem,
        pem: spCertificatePem,
        encryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#aes256-cbc',
        keyEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    ),
  );
  return Buffer.from(signed.replace(assertion, `<saml:EncryptedAssertion>${encrypted}</saml:EncryptedAssertion>`)).toString('base64');
}

/** The certificates of an SP metadata document, as PEM, in document order. */
export function metadataCertificates(xml: string): string[] {
  return [...xml.matchAll(/<X509Certificate>([^<]+)<\/X509Certificate>/g)].map(
    (m) => `-----BEGIN CERTIFICATE-----\n${m[1].match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
  );
}

/** The browser's post of the IdP's form to the ACS. */
export async function postToAcs(apiUrl: string, fields: Record<string, string>): Promise<{ status: number; location: URL | null }> {
  const res = await fetch(`${apiUrl}/sso/saml/acs`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  await res.text();
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location) : null };
}

function statusXml(status: Assertion['status']): string {
  const value = status?.value ?? 'urn:oasis:names:tc:SAML:2.0:status:Success';
  const nested = status?.nested ? `<samlp:StatusCode Value="${status.nested}"/>` : '';
  return `<samlp:Status><samlp:StatusCode Value="${value}"${nested ? `>${nested}</samlp:StatusCode>` : '/>'}</samlp:Status>`;
}

function audienceRestrictions(audience: string | string[] | null): string {
  const each = audience === null ? [] : Array.isArray(audience) ? audience : [audience];
  return each.map((a) => `<saml:AudienceRestriction><saml:Audience>${a}</saml:Audience></saml:AudienceRestriction>`).join('');
}
