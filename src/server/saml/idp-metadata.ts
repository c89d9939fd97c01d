// An identity provider's SAML metadata, read for what the service provider needs: its entity ID, where
// to send the browser (the HTTP-Redirect SingleSignOnService), where artifacts are resolved, the certificates its signatures verify
// against, and how long the document stays fresh (docs/sso-saml.md#identity-providers).
import { apiError } from '../errors.js';
import { children, descendants, parseXml, textOf, XmlProblem } from './xml.js';
import type { Element } from '@xmldom/xmldom';

export interface IdpMetadata {
  entityId: string;
  /** the HTTP-Redirect SingleSignOnService, else the HTTP-POST one (the AuthnRequest is sent by redirect either way) */
  ssoUrl: string;
  /** the SOAP ArtifactResolutionService, where a `SAMLart` is resolved (saml/artifact.ts); '' when none */
  artifactResolutionUrl: string;
  /** base64 DER certificates of the signing (or unspecified-use) KeyDescriptors */
  signingCerts: string[];
  validUntil: Date | null;
  cacheDurationMs: number | null;
}

const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const SOAP = 'urn:oasis:names:tc:SAML:2.0:bindings:SOAP';

/** Parses metadata given to the admin API; problems are the original's 400 validation_failed. */
export function parseIdpMetadata(raw: string): IdpMetadata {
  if (raw.includes('\uFFFD')) throw apiError('saml_metadata_invalid_utf8');
  let root: Element;
  try {
    root = parseXml(raw).documentElement!;
  } catch (err) {
    if (!(err instanceof XmlProblem)) throw err;
    throw apiError('saml_metadata_invalid', `SAML Metadata is not valid XML: ${err.message}`);
  }
  const entity = entityOf(root);
  const entityId = entity?.getAttribute('entityID') ?? '';
  if (!entity || !entityId) throw apiError('saml_metadata_no_entity_id');
  const idps = children(entity, 'IDPSSODescriptor');
  if (idps.length < 1) throw apiError('saml_metadata_no_idp');
  if (idps.length > 1) throw apiError('saml_metadata_many_idps');
  const idp = idps[0];
  const services = children(idp, 'SingleSignOnService');
  const service = services.find((s) => s.getAttribute('Binding') === REDIRECT) ?? services.find((s) => s.getAttribute('Binding') === POST);
  const signingCerts = children(idp, 'KeyDescriptor')
    .filter((kd) => (kd.getAttribute('use') ?? 'signing') !== 'encryption')
    .flatMap((kd) => descendants(kd, 'X509Certificate').map((c) => textOf(c).replace(/\s+/g, '')))
    .filter(Boolean);
  const validUntil = entity.getAttribute('validUntil') ? new Date(entity.getAttribute('validUntil')!) : null;
  return {
    entityId,
    ssoUrl: service?.getAttribute('Location') ?? '',
    artifactResolutionUrl:
      children(idp, 'ArtifactResolutionService')
        .find((s) => s.getAttribute('Binding') === SOAP)
        ?.getAttribute('Location') ?? '',
    signingCerts,
    validUntil: validUntil && !Number.isNaN(validUntil.getTime()) ? validUntil : null,
    cacheDurationMs: durationMs(entity.getAttribute('cacheDuration') ?? ''),
  };
}

/** The EntityDescriptor: the root, or the first one of an EntitiesDescriptor that describes an IdP. */
function entityOf(root: Element): Element | null {
  if (root.localName === 'EntityDescriptor') return root;
  if (root.localName !== 'EntitiesDescriptor') return null;
  const entities = descendants(root, 'EntityDescriptor');
  return entities.find((e) => children(e, 'IDPSSODescriptor').length > 0) ?? entities[0] ?? null;
}

/** An xs:duration such as PT1H or P1DT30M, in milliseconds; null when absent or unreadable. */
function durationMs(text: string): number | null {
  const m = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text.trim());
  if (!m || text.trim() === 'P') return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  return ((((y * 365 + mo * 30 + d) * 24 + h) * 60 + mi) * 60 + s) * 1000;
}
