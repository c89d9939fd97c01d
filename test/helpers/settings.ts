// The least a production configuration needs, in the original's names: tests of one setting's reading
// load it with this, so the setting under test is the only thing that can make the start fail or warn.
export const PRODUCTION_ENV: Readonly<Record<string, string>> = {
  GOTRUE_DB_DRIVER: 'postgres',
  DATABASE_URL: 'postgres://localhost/x',
  GOTRUE_JWT_SECRET: 'x'.repeat(40),
  GOTRUE_SITE_URL: 'http://localhost:3000',
  API_EXTERNAL_URL: 'http://localhost:9999',
};
