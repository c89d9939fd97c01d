// AWS_PROFILE given only in a configuration file (`-c`) picks the KMS signer's credentials from the shared
// credentials file, as the original's SDK finds it in the environment its loader filled from the file
// (docs/differences.md, Configuration). The signature reaches a fake KMS (helpers/kms-fake.ts), whose SigV4
// Authorization header names the access key the profile holds.
import t from 'tap';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeKms } from './helpers/kms-fake.js';
import { testServiceEnv } from './helpers/server.js';
import { loadConfig } from '../dist/server/config/load.js';
import { createKmsSigner } from '../dist/server/auth/kms-signer.js';
import { kmsKeyOf } from '../dist/server/auth/kms-key.js';

const kms = await startFakeKms('eu-west-1');
t.teardown(() => kms.stop());
const dir = mkdtempSync(path.join(os.tmpdir(), 'kms-profile-file-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// The SDK's own files, where any deployment keeps them; only the profile's name comes from the -c file. No
// credentials of the process environment may answer first, and no instance metadata service is asked.
writeFileSync(
  path.join(dir, 'credentials'),
  '[default]\naws_access_key_id = AKIADEFAULTPROFILE01\naws_secret_access_key = default-secret\n\n' +
    '[from-file]\naws_access_key_id = AKIAFROMFILEPROFILE1\naws_secret_access_key = file-secret\n',
);
writeFileSync(path.join(dir, 'config'), '');
const saved = { ...process.env };
t.teardown(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});
for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
process.env.AWS_SHARED_CREDENTIALS_FILE = path.join(dir, 'credentials');
process.env.AWS_CONFIG_FILE = path.join(dir, 'config');
process.env.AWS_EC2_METADATA_DISABLED = 'true';

t.test('AWS_PROFILE from the -c file chooses the credentials KMS is called with', async (t) => {
  const configFile = path.join(dir, 'auth.env');
  writeFileSync(configFile, 'AWS_PROFILE=from-file\n');
  const config = loadConfig({
    env: {
      ...testServiceEnv('postgres://unused@127.0.0.1:1/unused', 1),
      AUTH_JWT_KEYS: JSON.stringify([kms.jwk]),
      AWS_ENDPOINT_URL_KMS: kms.url,
    },
    configFile,
    envFile: null,
  });
  const jwk = kms.jwk as JsonWebKey;
  const sign = createKmsSigner({ kms: kmsKeyOf(jwk)!, verifyKey: createPublicKey({ key: jwk, format: 'jwk' }) }, config.jwt.kms);
  const token = await sign({ alg: 'RS256', typ: 'JWT', kid: jwk.kid }, { sub: 'someone' });
  t.equal(token.split('.').length, 3, 'signed');
  t.equal(kms.requests.length, 1, 'one call to KMS');
  t.match(kms.requests[0]?.authorization, /Credential=AKIAFROMFILEPROFILE1\//, "the named profile's access key, not the default's");
});
