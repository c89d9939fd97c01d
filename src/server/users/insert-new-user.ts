// Inserting a new user where the operator's own database code may refuse it: a trigger on auth.users
// (creating a profile row, refusing some addresses) that raises, or a constraint the operator added. The
// original answers such a failure with its own message, which apps show and search for ("Database error
// saving new user"), and keeps the database's error behind it (http/postgres-error.ts).
import pg from 'pg';
import { apiError } from '../errors.js';
import { databaseFault } from '../../db/faults.js';
import { insertUser, type UserRow, type UserWrite } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';

export type NewUserFailure = 'database_error_saving_user' | 'database_error_creating_anonymous_user' | 'database_error_creating_user';

/** insertUser, its database refusals answered as the original's 500 of this kind of sign-up. */
export async function insertNewUser(
  q: Queryable,
  fields: UserWrite,
  failure: NewUserFailure = 'database_error_saving_user',
): Promise<UserRow | null> {
  try {
    return await insertUser(q, fields);
  } catch (err) {
    // A lost or saturated database stays a 503 (db/faults.ts).
    if (!(err instanceof pg.DatabaseError) || databaseFault(err)) throw err;
    throw apiError(failure).causedBy(err);
  }
}
