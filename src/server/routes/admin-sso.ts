// /admin/sso/providers[/{idp_id}] (docs/sso-saml.md#identity-providers): the SAML identity providers. {idp_id} is
// the provider's UUID or resource_<resource_id>, as in the original.
import { apiError, ApiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import {
  deleteSsoProvider,
  domainsTaken,
  findSsoProviderByEntityId,
  findSsoProviderById,
  findSsoProviderByResourceId,
  insertSsoProvider,
  listSsoProviders,
  lockSsoProvider,
  replaceSsoDomains,
  updateSamlProvider,
  updateSsoProvider,
  type SsoProviderRow,
} from '../../db/sso-providers.js';
import { bodyMetadata, checkProviderBody, readAttributeMapping, readDomains, type ProviderBody } from '../saml/provider-params.js';
import { providerJson } from '../saml/provider-json.js';
import { normalMapping, sameMapping } from '../saml/attribute-mapping.js';
import type { Admin } from '../auth/admin.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';
import type { AppContext } from '../context.js';
import { canonicalUuid } from '../uuid-text.js';

async function loadProvider(req: ApiRequest, ctx: AppContext): Promise<SsoProviderRow> {
  const idp = req.params.idp_id ?? '';
  let provider: SsoProviderRow | null = null;
  if (idp.startsWith('resource_')) provider = await findSsoProviderByResourceId(ctx.db, idp.slice('resource_'.length));
  else {
    // Any spelling the original's UUID reading takes.
    const id = canonicalUuid(idp);
    if (id) provider = await findSsoProviderById(ctx.db, id);
  }
  if (!provider) throw apiError('sso_admin_provider_not_found');
  return provider;
}

export const adminListSsoProviders: GuardedHandler<Admin> = async (req, ctx) => {
  const providers = await listSsoProviders(ctx.db, {
    resourceId: req.query.get('resource_id') ?? undefined,
    resourceIdPrefix: req.query.get('resource_id_prefix') ?? undefined,
  });
  // The list leaves metadata_xml out so that it stays small, as the original's does.
  return { body: { items: providers.map((p) => providerJson(p, false)) } };
};

export const adminGetSsoProvider: GuardedHandler<Admin> = async (req, ctx) => ({ body: providerJson(await loadProvider(req, ctx)) });

export const adminCreateSsoProvider: GuardedHandler<Admin, ProviderBody> = async (req, ctx) => {
  const body = req.body();
  checkProviderBody(body, false);
  const metadata = (await bodyMetadata(ctx, req, body))!;
  const domains = readDomains(body) ?? [];
  // Answered as this transaction wrote it: read after the commit, a concurrent delete or PUT of the new
  // provider could come first (a 500 for a provider no longer found, or another request's changes).
  const created = await tx(
    ctx.db,
    async (c) => {
      if (await findSsoProviderByEntityId(c, metadata.parsed.entityId)) {
        throw apiError('saml_idp_already_exists', `SAML Identity Provider with this EntityID (${metadata.parsed.entityId}) already exists`);
      }
      const [taken] = await domainsTaken(c, domains, null);
      if (taken) {
        throw apiError(
          'sso_domain_already_exists',
          `SSO Domain '${taken.domain}' is already assigned to an SSO identity provider (${taken.sso_provider_id})`,
        );
      }
      const id = await insertSsoProvider(
        c,
        {
          // "" is stored as given, as the original does (only an absent or null resource_id is none).
          resourceId: body.resource_id ?? null,
          disabled: body.disabled ?? null,
          entityId: metadata.parsed.entityId,
          metadataXml: metadata.raw,
          metadataUrl: body.metadata_url || null,
          attributeMapping: readAttributeMapping(body) ?? {},
          nameIdFormat: body.name_id_format || null,
        },
        domains,
      );
      return (await findSsoProviderById(c, id))!;
    },
    req.signal,
  ).catch(conflict('sso_create_conflict'));
  return { status: 201, body: providerJson(created) };
};

export const adminUpdateSsoProvider: GuardedHandler<Admin, ProviderBody> = async (req, ctx) => {
  // The provider first, as the original's loader runs before its handler reads the body: an unknown
  // provider is 404 whatever the body says.
  const { id, entity_id: entityId } = await loadProvider(req, ctx);
  const body = req.body();
  checkProviderBody(body, true);
  const metadata = await bodyMetadata(ctx, req, body);
  // Checked here, in the original's order: a provider's EntityID never changes (no write moves it).
  if (metadata && metadata.parsed.entityId !== entityId) {
    throw apiError(
      'saml_entity_id_mismatch',
      `SAML Metadata can be updated only if the EntityID matches for the provider; expected '${entityId}' but got '${metadata.parsed.entityId}'`,
    );
  }
  const domains = readDomains(body);
  const mapping = readAttributeMapping(body);
  const nameIdFormat = body.name_id_format || null;
  // The body merges into the stored provider under its row's lock, read after taking it: of two concurrent
  // PUTs, the second merges into what the first wrote, so neither's change is lost. Gone meanwhile: 404.
  const updated = await tx(
    ctx.db,
    async (c) => {
      const provider = (await lockSsoProvider(c, id, 'no key update')) ? await findSsoProviderById(c, id) : null;
      if (!provider) throw apiError('sso_admin_provider_not_found');
      const resourceId = body.resource_id === undefined || body.resource_id === null ? provider.resource_id : body.resource_id || null;
      const disabled = body.disabled ?? provider.disabled;
      const mappingChanged = mapping !== null && !sameMapping(mapping, provider.attribute_mapping);
      // As the original: the SAML row is written only with new metadata or a changed mapping (it then takes the
      // body's name_id_format, absent meaning none), so that its updated_at, which metadata freshness counts
      // from, moves only then; the provider row only when something differs.
      const samlChanged = metadata !== null || mappingChanged;
      const domainsChanged = domains !== null && !sameDomains(domains, provider.domains);
      const modified =
        samlChanged ||
        domainsChanged ||
        nameIdFormat !== (provider.name_id_format || null) ||
        resourceId !== provider.resource_id ||
        disabled !== provider.disabled;
      if (!modified) return provider;
      const [taken] = domains ? await domainsTaken(c, domains, id) : [];
      if (taken) {
        throw apiError(
          'sso_domain_already_exists',
          `SSO domain '${taken.domain}' already assigned to another provider (${taken.sso_provider_id})`,
        );
      }
      await updateSsoProvider(c, id, { resourceId, disabled });
      if (domains && domainsChanged) await replaceSsoDomains(c, id, domains);
      if (samlChanged) {
        await updateSamlProvider(c, id, {
          metadataXml: metadata?.raw ?? provider.metadata_xml,
          metadataUrl: (metadata && body.metadata_url) || provider.metadata_url,
          attributeMapping: mappingChanged ? mapping : normalMapping(provider.attribute_mapping),
          nameIdFormat,
        });
      }
      return (await findSsoProviderById(c, id))!;
    },
    req.signal,
  ).catch(conflict('sso_update_conflict'));
  return { body: providerJson(updated) };
};

export const adminDeleteSsoProvider: GuardedHandler<Admin> = async (req, ctx) => {
  const { id } = await loadProvider(req, ctx);
  // Under the row's lock, so that of concurrent deletes only the one that deletes the provider answers it,
  // with the provider as it was when deleted; the others find it gone, as a delete made after it does.
  const deleted = await tx(
    ctx.db,
    async (c) => {
      if (!(await lockSsoProvider(c, id, 'update'))) return null;
      const provider = await findSsoProviderById(c, id);
      return provider && (await deleteSsoProvider(c, id)) ? provider : null;
    },
    req.signal,
  );
  if (!deleted) throw apiError('sso_admin_provider_not_found');
  return { body: providerJson(deleted) };
};

/** Whether the provider would hold exactly these domains (compared as stored, lower-cased). */
function sameDomains(domains: string[], held: string[]): boolean {
  const now = new Set(held.map((d) => d.toLowerCase()));
  return domains.length === now.size && domains.every((d) => now.has(d));
}

/** A unique index that a concurrent request won (entity ID, domain, resource_id) is that request's conflict. */
function conflict(name: 'sso_create_conflict' | 'sso_update_conflict') {
  return (err: unknown): never => {
    if (!(err instanceof ApiError) && (err as { code?: string }).code === '23505') throw apiError(name);
    throw err;
  };
}
