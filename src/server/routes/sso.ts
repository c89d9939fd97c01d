// POST /sso, GET /sso/saml/metadata and POST /sso/saml/acs (docs/sso-saml.md); SAML_ENABLED gates them all.
// The flow's modules, and with them node-saml, xml-crypto and node-forge, load on the first SAML request,
// not with every HTTP thread: most deployments never turn SAML on, and a thread starts faster without them.
import { ssoBody } from '../saml/sso-body.js';
import type { Handler } from '../http/types.js';

export { ssoBody };

/** 303 to the IdP, or {url} with skip_http_redirect (auth-js signInWithSSO asks for the latter). */
export const sso: Handler<ReturnType<typeof ssoBody>> = async (req, ctx) => {
  const { startSso } = await import('../saml/start.js');
  const { url, skipRedirect } = await startSso(req, ctx);
  if (skipRedirect) return { body: { url } };
  return { status: 303, headers: { Location: url } };
};

export const samlMetadata: Handler = async (req, ctx) => {
  const { spMetadata } = await import('../saml/sp-metadata.js');
  const download = req.query.get('download') === 'true';
  const { xml, cacheControl } = spMetadata(ctx.config, download);
  const headers: Record<string, string> = { 'Content-Type': 'application/xml', 'Cache-Control': cacheControl };
  if (download) headers['Content-Disposition'] = 'attachment; filename="metadata.xml"';
  return { body: xml, headers };
};

export const samlAcs: Handler = async (req, ctx) => {
  const { handleAcs } = await import('../saml/acs.js');
  return handleAcs(req, ctx);
};
