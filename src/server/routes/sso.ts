// POST /sso, GET /sso/saml/metadata and POST /sso/saml/acs (docs/sso-saml.md); SAML_ENABLED gates them all.
import { startSso, ssoBody } from '../saml/start.js';
import { spMetadata } from '../saml/sp-metadata.js';
import { handleAcs } from '../saml/acs.js';
import type { Handler } from '../http/types.js';

export { ssoBody };

/** 303 to the IdP, or {url} with skip_http_redirect (auth-js signInWithSSO asks for the latter). */
export const sso: Handler<ReturnType<typeof ssoBody>> = async (req, ctx) => {
  const { url, skipRedirect } = await startSso(req, ctx);
  if (skipRedirect) return { body: { url } };
  return { status: 303, headers: { Location: url } };
};

export const samlMetadata: Handler = (req, ctx) => {
  const download = req.query.get('download') === 'true';
  const { xml, cacheControl } = spMetadata(ctx.config, download);
  const headers: Record<string, string> = { 'Content-Type': 'application/xml', 'Cache-Control': cacheControl };
  if (download) headers['Content-Disposition'] = 'attachment; filename="metadata.xml"';
  return { body: xml, headers };
};

export const samlAcs: Handler = (req, ctx) => handleAcs(req, ctx);
