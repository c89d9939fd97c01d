// /admin/custom-providers (docs/custom-providers.md#admin-api): operators list, create, read, change and
// delete the OAuth2/OIDC providers users sign in with as `custom:<id>`. Outbound checks (DNS, discovery)
// run before the short transaction that writes, so no transaction is held across the network. Concurrent
// requests: creates take turns on an advisory lock for their count and insert, so the quota holds; an update
// writes only onto the row version it merged onto (locked `for update`), else merges again onto the newer one,
// so no concurrent update's change is lost.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import {
  countCustomProviders,
  deleteCustomProvider,
  findCustomProvider,
  findCustomProviderVersion,
  insertCustomProvider,
  listCustomProviders,
  lockCustomProviderCreates,
  lockCustomProviderVersion,
  updateCustomProvider,
  type CustomProviderRow,
} from '../../db/custom-oauth-providers.js';
import { secretBox } from '../mfa/encryption.js';
import { providerJson } from '../custom-providers/provider-json.js';
import { changedProvider, checkNewProviderUrls, newProvider, type BuildOptions } from '../custom-providers/build.js';
import {
  checkAttributeMapping,
  checkAuthorizationParams,
  checkClaimsAllowlist,
  checkIdentifier,
  checkLengths,
  checkRequired,
  stringList,
  type ProviderBody,
} from '../custom-providers/params.js';
import type { Admin } from '../auth/principal.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';
import type { AppContext } from '../context.js';

export { providerBody } from '../custom-providers/params.js';

const isType = (t: string): t is 'oauth2' | 'oidc' => t === 'oauth2' || t === 'oidc';

export const listProviders: GuardedHandler<Admin> = async (req, ctx) => {
  const type = req.query.get('type') ?? '';
  if (type && !isType(type)) throw apiError('validation_failed', "type must be either 'oauth2' or 'oidc'");
  const rows = await listCustomProviders(ctx.db, isType(type) ? type : null);
  return { body: { providers: rows.map(providerJson) } };
};

export const getProvider: GuardedHandler<Admin> = async (req, ctx) => {
  return { body: providerJson(await load(req, ctx)) };
};

export const createProvider: GuardedHandler<Admin, ProviderBody> = async (req, ctx) => {
  const body = req.body();
  const type = body.provider_type ?? '';
  if (!isType(type)) throw apiError('validation_failed', "provider_type must be either 'oauth2' or 'oidc'");
  checkRequired(body, type);
  checkLengths(body);
  checkOptions(body);
  const { maxProviders } = ctx.config.customOAuth;
  if (maxProviders > 0 && (await countCustomProviders(ctx.db)) >= maxProviders) throw apiError('over_custom_provider_quota');
  const options = buildOptions(ctx, req);
  await checkNewProviderUrls(body, type, options);
  if (await findCustomProvider(ctx.db, body.identifier!)) throw apiError('custom_provider_exists');
  const fields = await newProvider(body, type, options);
  const row = await tx(
    ctx.db,
    async (c) => {
      // The count above answers early, before the outbound checks; this one, taken in turn, decides.
      if (maxProviders > 0) {
        await lockCustomProviderCreates(c, ctx.config.db.namespace);
        if ((await countCustomProviders(c)) >= maxProviders) throw apiError('over_custom_provider_quota');
      }
      return insertCustomProvider(c, fields);
    },
    req.signal,
  );
  if (!row) throw apiError('custom_provider_exists');
  return { status: 201, body: providerJson(row) };
};

export const updateProvider: GuardedHandler<Admin, ProviderBody> = async (req, ctx) => {
  const identifier = identifierParam(req);
  const body = req.body();
  checkOptions(body);
  checkLengths(body);
  const options = buildOptions(ctx, req);
  // Merged outside a transaction (changedProvider may check URLs and fetch a discovery document), written
  // only if the row is still the version merged onto; a concurrent write in between means merging again
  // onto the newer row. Each retry follows another request's committed write, and the deadline ends it.
  for (;;) {
    const found = await findCustomProviderVersion(ctx.db, identifier);
    if (!found) throw apiError('custom_provider_not_found');
    const changed = await changedProvider(found.row, body, options);
    const saved = await tx(
      ctx.db,
      async (c) => {
        const version = await lockCustomProviderVersion(c, found.row.id);
        if (version === null) throw apiError('custom_provider_not_found');
        if (version !== found.version) return 'stale' as const;
        return updateCustomProvider(c, changed);
      },
      req.signal,
    );
    if (saved === 'stale') continue;
    if (!saved) throw apiError('custom_provider_not_found');
    return { body: providerJson(saved) };
  }
};

export const deleteProvider: GuardedHandler<Admin> = async (req, ctx) => {
  if (!(await deleteCustomProvider(ctx.db, identifierParam(req)))) throw apiError('custom_provider_not_found');
  return { status: 204 };
};

function identifierParam(req: ApiRequest<unknown>): string {
  const identifier = req.params.identifier ?? '';
  checkIdentifier(identifier);
  return identifier;
}

async function load(req: ApiRequest<unknown>, ctx: AppContext): Promise<CustomProviderRow> {
  const row = await findCustomProvider(ctx.db, identifierParam(req));
  if (!row) throw apiError('custom_provider_not_found');
  return row;
}

/** authorization_params, attribute_mapping and custom_claims_allowlist, when given, in the original's order. */
function checkOptions(body: ProviderBody): void {
  stringList(body, 'scopes');
  stringList(body, 'acceptable_client_ids');
  checkAuthorizationParams(body.authorization_params);
  checkAttributeMapping(body.attribute_mapping);
  checkClaimsAllowlist(stringList(body, 'custom_claims_allowlist'));
}

const buildOptions = (ctx: AppContext, request: BuildOptions['request']): BuildOptions => ({
  allowPrivateUrls: ctx.config.customOAuth.allowPrivateUrls,
  box: secretBox(ctx.config),
  request,
});
