// grant_type=web3: Sign-In with Ethereum/Solana is not built, so the grant answers as the original does
// while both chains are disabled, which is what auth-js expects (docs/differences.md#not-built-yet; test/absent-features.test.ts).
import { apiError } from '../errors.js';
import { grantSchema } from '../http/validate.js';
import type { Grant } from './grant.js';

export const web3: Grant = {
  grantType: 'web3',
  schema: grantSchema(),
  handle() {
    throw apiError('web3_provider_disabled');
  },
};
