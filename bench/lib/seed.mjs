// Test data: confirmed email users written with SQL (one real argon2id hash with the service's
// parameters, shared: a verify costs the same whatever the salt), and sessions made the way clients make
// them, through the password grant.
import { hashPassword } from '../../dist/workers/crypto.js';

export const PASSWORD = 'bench-password-0123';
export const userEmail = (i) => `bench-user-${i}@example.com`;

/** Inserts `count` confirmed users with their email identities, in one statement. */
export async function seedUsers(service, count) {
  const hash = await hashPassword({ ...service.hash, password: PASSWORD });
  await service.db.query(
    `
    with created as (
      insert into users (aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
      select $2, $3, 'bench-user-' || i || '@example.com', $1, now(), '{"provider":"email","providers":["email"]}',
             jsonb_build_object('email', 'bench-user-' || i || '@example.com', 'email_verified', true, 'phone_verified', false)
      from generate_series(0, $4 - 1) as i
      returning id, email)
    insert into identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
    select id::text, id, jsonb_build_object('sub', id::text, 'email', email, 'email_verified', true, 'phone_verified', false), 'email', now()
    from created`,
    [hash, service.aud, service.role, count],
  );
}

/** Signs in `count` times (spread over the seeded users, a few at a time): [{access_token, refresh_token, user}]. */
export async function signIn(service, count, users, { parallel = 8, offset = 0 } = {}) {
  const sessions = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      let res;
      let body;
      // A freshly started service's hashing queue may refuse a burst (503 over_capacity, README "Faults and
      // readiness") on a busy machine: seeding waits as its Retry-After says, a few times.
      for (let attempt = 1; ; attempt++) {
        res = await fetch(`${service.url}/token?grant_type=password`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: userEmail((offset + i) % users), password: PASSWORD }),
        });
        body = await res.json();
        if (res.status !== 503 || attempt === 10) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(2, Number(res.headers.get('retry-after')) || 1) * 1000));
      }
      if (res.status !== 200) throw new Error(`seeding sessions: password grant answered ${res.status} ${JSON.stringify(body)}`);
      sessions[i] = body;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return sessions;
}
