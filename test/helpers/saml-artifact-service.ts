// An IdP's artifact resolution service (SAML bindings §3.6, SOAP over HTTP), as Shibboleth or ADFS run one:
// the IdP hands the browser an artifact instead of the response, keeps the response, and gives it out once
// to the service provider that posts a signed ArtifactResolve naming the artifact. Each request is recorded
// with whether its signature verifies against the SP's certificate (xml-crypto, as an IdP would check it);
// `answer` lets a test bend the ArtifactResponse (another InResponseTo, a failed status, an old one).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { DOMParser } from '@xmldom/xmldom';

export interface ArtifactRequestSeen {
  id: string;
  issuer: string;
  artifact: string;
  signatureValid: boolean;
  contentType: string | undefined;
}

export interface ArtifactAnswer {
  inResponseTo?: string;
  status?: string;
  issueInstant?: Date;
  issuer?: string;
  httpStatus?: number;
  /** signs the whole SOAP answer (its Assertion, in place), as an IdP that signs the response where it sends it */
  signInPlace?: (soapXml: string) => string;
}

export interface ArtifactService {
  /** where the IdP metadata's SOAP ArtifactResolutionService points */
  url: string;
  seen: ArtifactRequestSeen[];
  /** the SP certificate (PEM) the ArtifactResolve signatures are checked with */
  spCertificatePem: string;
  /** Keeps `responseXml` (a signed Response) and returns the artifact that stands for it. */
  issue(responseXml: string, answer?: ArtifactAnswer): string;
  stop(): Promise<void>;
}

export async function startArtifactService(idpEntityId: string): Promise<ArtifactService> {
  const kept = new Map<string, { responseXml: string; answer: ArtifactAnswer }>();
  const state: ArtifactService = {
    url: '',
    seen: [],
    spCertificatePem: '',
    issue(responseXml, answer = {}) {
      // Type 0x0004, endpoint index 0, a source id and a message handle, base64 (SAML bindings §3.6.4).
      const artifact = Buffer.concat([Buffer.from([0, 4, 0, 0]), randomBytes(20), randomBytes(20)]).toString('base64');
      kept.set(artifact, { responseXml, answer });
      return artifact;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const server = http.createServer((req, res) => {
    void answer(req, res).catch(() => res.writeHead(500).end());
  });
  async function answer(req: http.IncomingMessage, res: http.ServerResponse) {
    let body = '';
    for await (const chunk of req) body += chunk;
    const doc = new DOMParser().parseFromString(body, 'text/xml');
    const resolve = doc.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:protocol', 'ArtifactResolve')[0];
    if (!resolve) return res.writeHead(400).end();
    const signature = resolve.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0];
    let signatureValid = false;
    if (signature && state.spCertificatePem) {
      const verifier = new SignedXml({ publicCert: state.spCertificatePem });
      verifier.loadSignature(signature as unknown as Node);
      try {
        signatureValid = verifier.checkSignature(body);
      } catch {
        signatureValid = false;
      }
    }
    const id = resolve.getAttribute('ID') ?? '';
    const artifact = resolve.getElementsByTagNameNS('*', 'Artifact')[0]?.textContent ?? '';
    state.seen.push({
      id,
      issuer: resolve.getElementsByTagNameNS('*', 'Issuer')[0]?.textContent ?? '',
      artifact,
      signatureValid,
      contentType: req.headers['content-type'],
    });
    const found = signatureValid ? kept.get(artifact) : undefined;
    kept.delete(artifact); // given out once
    const a = found?.answer ?? {};
    if (a.httpStatus) return res.writeHead(a.httpStatus).end();
    const status = found ? (a.status ?? 'urn:oasis:names:tc:SAML:2.0:status:Success') : 'urn:oasis:names:tc:SAML:2.0:status:Requester';
    const inner = found ? found.responseXml.replace(/^<\?xml[^>]*>/, '') : '';
    const soap =
      '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
      `<samlp:ArtifactResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
      'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
      `ID="_ar${randomBytes(8).toString('hex')}" Version="2.0" IssueInstant="${(a.issueInstant ?? new Date()).toISOString()}" ` +
      `InResponseTo="${a.inResponseTo ?? id}">` +
      `<saml:Issuer>${a.issuer ?? idpEntityId}</saml:Issuer>` +
      `<samlp:Status><samlp:StatusCode Value="${status}"/></samlp:Status>${inner}` +
      '</samlp:ArtifactResponse></soap:Body></soap:Envelope>';
    res.writeHead(200, { 'content-type': 'text/xml' }).end(a.signInPlace ? a.signInPlace(soap) : soap);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/artifact`;
  return state;
}
