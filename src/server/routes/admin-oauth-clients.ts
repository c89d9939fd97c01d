// /admin/oauth/clients (docs/oauth-server.md#clients): an operator lists, registers, reads, changes,
// deletes a client and makes it a new secret. The {client_id} is checked and the client loaded before
// the body is read, as the original's middleware does.
import { apiError } from '../errors.js';
import {
  deleteOAuthClient,
  findOAuthClient,
  listOAuthClients,
  setOAuthClientSecretHash,
  updateOAuthClient,
  type OAuthClientRow,
} from '../../db/oauth-clients.js';
import { canonicalUuid } from '../uuid-text.js';
import type { Admin } from '../auth/principal.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';
import type { AppContext } from '../context.js';
import { clientJson } from '../oauth-server/client-json.js';
import { registerClient } from '../oauth-server/register.js';
import { checkUpdate, type RegisterParams, type UpdateParams } from '../oauth-server/client-params.js';
import { oauthJsonBody } from '../oauth-server/json-body.js';
import { hashClientSecret, newClientSecret } from '../oauth-server/client-secret.js';

// The original answers {} for no clients (its list is omitempty).
export const adminListOAuthClients: GuardedHandler<Admin> = async (_req, ctx) => {
  const clients = await listOAuthClients(ctx.db);
  return { body: clients.length ? { clients: clients.map((c) => clientJson(c)) } : {} };
};

export const adminCreateOAuthClient: GuardedHandler<Admin, RegisterParams> = async (req, ctx) => {
  const { client, secret } = await registerClient(ctx, oauthJsonBody(req), 'manual');
  return { status: 201, body: clientJson(client, secret) };
};

export const adminGetOAuthClient: GuardedHandler<Admin> = async (req, ctx) => ({ body: clientJson(await loadClient(req, ctx)) });

export const adminUpdateOAuthClient: GuardedHandler<Admin, UpdateParams | null> = async (req, ctx) => {
  const client = await loadClient(req, ctx);
  const params = oauthJsonBody(req);
  if (!params) throw apiError('oauth_client_no_changes');
  checkUpdate(params, client.client_type);
  const { redirect_uris, grant_types, ...rest } = params;
  // An empty name or URI clears the column to NULL, as the original stores it (and as registration does).
  const cleared = (['client_name', 'client_uri', 'logo_uri'] as const).filter((k) => rest[k] === '').map((k) => [k, null]);
  const updated = await updateOAuthClient(ctx.db, client.id, {
    ...rest,
    ...Object.fromEntries(cleared),
    ...(redirect_uris ? { redirect_uris: redirect_uris.join(',') } : {}),
    ...(grant_types ? { grant_types: grant_types.join(',') } : {}),
  } as Parameters<typeof updateOAuthClient>[2]);
  if (!updated) throw apiError('oauth_client_not_found');
  return { body: clientJson(updated) };
};

export const adminDeleteOAuthClient: GuardedHandler<Admin> = async (req, ctx) => {
  const client = await loadClient(req, ctx);
  if (!(await deleteOAuthClient(ctx.db, client.id))) throw apiError('oauth_client_not_found');
  return { status: 204 };
};

export const adminRegenerateOAuthClientSecret: GuardedHandler<Admin> = async (req, ctx) => {
  const client = await loadClient(req, ctx);
  if (client.client_type !== 'confidential') throw apiError('oauth_public_client_secret');
  const secret = newClientSecret();
  const updated = await setOAuthClientSecretHash(ctx.db, client.id, hashClientSecret(secret));
  if (!updated) throw apiError('oauth_client_not_found');
  return { body: clientJson(updated, secret) };
};

async function loadClient(req: ApiRequest<unknown>, ctx: AppContext): Promise<OAuthClientRow> {
  // Any spelling the original's UUID reading takes.
  const id = canonicalUuid(req.params.client_id);
  if (!id) throw apiError('oauth_client_id_format');
  const client = await findOAuthClient(ctx.db, id);
  if (!client) throw apiError('oauth_client_not_found');
  return client;
}
