// `portcullis admin createuser|deleteuser`, the original's `auth admin` commands, for the scripts that
// seed or remove users without the API (docs/adopting-gotrue.md#admin-commands). Same arguments, flags and
// exit codes: createuser EMAIL PASSWORD [ROLE] [--confirm] [--admin], deleteuser EMAIL|ID, and --aud/-a
// on both. Unlike the original's, a created user gets its email identity, as POST /admin/users gives one.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { createPool, tx } from '../db/pool.js';
import { findUserByEmail, findUserById, isEmailTaken } from '../db/users.js';
import { hardDeleteUser } from '../db/user-deletion.js';
import { withCommandDatabase } from './cli-database.js';
import { hashPassword } from '../workers/crypto.js';
import { createUser } from './users/create.js';
import { normaliseEmail } from './users/addresses.js';
import { isPasswordTooLong } from './users/password-policy.js';
import { ApiError } from './errors.js';
import { CANONICAL_UUID as UUID } from './uuid-text.js';
import type { Config } from './config/types.js';
import { storedPasswordHash } from './users/password-at-rest.js';

export const ADMIN_USAGE =
  'usage: portcullis admin createuser EMAIL PASSWORD [ROLE] [--confirm] [--admin] [--aud AUD] | admin deleteuser EMAIL|ID [--aud AUD]';

type Parsed = { command: 'createuser' | 'deleteuser'; positionals: string[]; confirm: boolean; admin: boolean; aud: string | undefined };

function parseAdminArgs(args: string[]): Parsed | null {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: { confirm: { type: 'boolean' }, admin: { type: 'boolean' }, aud: { type: 'string', short: 'a' } },
    });
  } catch {
    return null;
  }
  const [command, ...positionals] = parsed.positionals;
  const { confirm = false, admin = false, aud } = parsed.values;
  if (command === 'createuser' && positionals.length >= 2 && positionals.length <= 3) {
    return { command, positionals, confirm, admin, aud };
  }
  if (command === 'deleteuser' && positionals.length === 1 && !confirm && !admin) return { command, positionals, confirm, admin, aud };
  return null;
}

export async function adminCommand(config: Config, log: Logger, args: string[]): Promise<number> {
  const parsed = parseAdminArgs(args);
  if (!parsed) {
    console.error(ADMIN_USAGE);
    return 2;
  }
  return withCommandDatabase(config, log, async (url) => {
    const pool = createPool({ url, max: 1, namespace: config.db.namespace, applicationName: 'portcullis_admin' });
    try {
      const aud = parsed.aud || config.jwt.aud;
      return parsed.command === 'createuser'
        ? await createUserCommand(config, log, pool, aud, parsed)
        : await deleteUserCommand(log, pool, aud, parsed.positionals[0]);
    } catch (err) {
      log.error({ err }, `admin ${parsed.command} failed`);
      return 1;
    } finally {
      await pool.end();
    }
  });
}

async function createUserCommand(
  config: Config,
  log: Logger,
  pool: ReturnType<typeof createPool>,
  aud: string,
  p: Parsed,
): Promise<number> {
  const [address, password, role] = p.positionals;
  let email: string;
  try {
    email = normaliseEmail(address);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    log.error(`Error creating new user: ${err.message}`);
    return 1;
  }
  if (isPasswordTooLong(password)) {
    log.error('Error creating new user: password is too long');
    return 1;
  }
  if (await isEmailTaken(pool, email)) {
    log.error('Error creating new user: user already exists');
    return 1;
  }
  const { memoryKiB, timeCost, parallelism } = config.password.hash;
  const id = randomUUID();
  const passwordHash = storedPasswordHash(config, id, await hashPassword({ password, memoryKiB, timeCost, parallelism }));
  const created = await tx(pool, (c) =>
    createUser(c, {
      id,
      provider: 'email',
      address: email,
      aud,
      role: role || (p.admin ? config.jwt.adminGroupName : config.jwt.defaultGroupName),
      passwordHash,
      data: {},
      confirmed: p.confirm || config.mailer.autoconfirm,
    }),
  );
  if (!created) {
    log.error('Error creating new user: user already exists');
    return 1;
  }
  log.info({ user_id: created.user.id, aud, role: created.user.role }, `Created user: ${email}`);
  return 0;
}

/** By email in the audience, else by id; the row goes with its sessions, identities and factors (hard delete). */
async function deleteUserCommand(log: Logger, pool: ReturnType<typeof createPool>, aud: string, key: string): Promise<number> {
  const user = (await findUserByEmail(pool, key.trim(), aud)) ?? (UUID.test(key) ? await findUserById(pool, key.toLowerCase()) : null);
  if (!user) {
    log.error(`Error finding user (${key}): no user with this email in audience "${aud}" or with this id`);
    return 1;
  }
  await tx(pool, (c) => hardDeleteUser(c, user.id));
  log.info({ user_id: user.id }, `Removed user: ${key}`);
  return 0;
}
