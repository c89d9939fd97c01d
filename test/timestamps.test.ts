// timestamptz text → Date (src/db/timestamps.ts): the fast path gives exactly the instant pg's own parser
// gives, on PostgreSQL's own output in time zones with odd offsets, at the edges of its range, and for
// every shape it leaves to the library; it keeps the microseconds, and JSON writes them as the original.
import t from 'tap';
import pg from 'pg';
import { DbTimestamp, parseTimestamptz, POOL_TYPES, rfc3339Nano } from '../dist/db/timestamps.js';
import { createPool } from '../dist/db/pool.js';

const library = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

/** A Date, a number (±Infinity) or null, comparable whatever it is. */
const comparable = (value: unknown) => (value instanceof Date ? `date ${value.getTime()}` : `${typeof value} ${String(value)}`);

const ZONES = [
  'UTC',
  'Asia/Kolkata', // +05:30
  'America/St_Johns', // -03:30, and -03:30:52 before 1935
  'Asia/Kathmandu', // +05:45
  'Pacific/Chatham', // +12:45 / +13:45
  'Europe/Amsterdam', // +00:19:32 before 1937
  'America/Los_Angeles',
];

const INSTANTS = [
  'now()',
  `'2026-11-25 10:00:00+00'`,
  `'2026-11-25 10:00:00.5+00'`,
  `'2026-11-25 10:00:00.05+00'`,
  `'2026-11-25 10:00:00.000001+00'`,
  `'2026-11-25 10:00:00.999999+00'`,
  `'2026-03-29 01:30:00+00'`, // a daylight-saving change in Amsterdam
  `'1900-01-01 00:00:00+00'`,
  `'1000-01-01 00:00:00+00'`,
  `'0999-12-31 23:59:59.999999+00'`,
  `'0050-06-15 12:00:00+00'`,
  `'0001-01-01 00:00:00+00'`,
  `'0044-03-15 12:00:00+00 BC'`,
  `'4713-01-01 00:00:00+00 BC'`,
  `'9999-12-31 23:59:59.999999+00'`,
  `'10000-01-01 00:00:00+00'`,
  `'294276-12-31 23:59:59+00'`,
  `'infinity'`,
  `'-infinity'`,
];

t.test('PostgreSQL’s own text, in every zone and DateStyle ISO: the same Date as pg’s parser', async (t) => {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  t.teardown(() => client.end());
  // Random instants too, with microseconds, across four centuries.
  const random = Array.from({ length: 200 }, () => `to_timestamp(${(Math.random() * 1.3e10 - 2.2e9).toFixed(6)})`);
  let compared = 0;
  for (const zone of ZONES) {
    await client.query(`set timezone to '${zone}'`);
    const { rows } = await client.query<{ text: string }>(
      `select v::text as text from (values ${[...INSTANTS, ...random].map((v) => `(${v}::timestamptz)`).join(', ')}) as s(v)`,
    );
    const differing = rows.filter((r) => comparable(parseTimestamptz(r.text)) !== comparable(library(r.text))).map((r) => r.text);
    t.strictSame(differing, [], `${zone}: every text parses as pg's parser parses it`);
    compared += rows.length;
    // The same instants as PostgreSQL writes them in UTC with all six digits, in Go's RFC3339Nano shape.
    const { rows: utc } = await client.query<{ text: string; rfc3339: string }>(
      `select v::text as text, regexp_replace(to_char(v at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\\.?0*$', '') || 'Z' as rfc3339
       from (values ${random.map((v) => `(${v}::timestamptz)`).join(', ')}, ('2026-11-25 10:00:00.12+00'), ('2026-11-25 10:00:00+00')) as s(v)`,
    );
    const misses = utc.filter((r) => rfc3339Nano(parseTimestamptz(r.text)) !== r.rfc3339).map((r) => `${r.text} → ${r.rfc3339}`);
    t.strictSame(misses, [], `${zone}: the JSON text carries the stored microseconds`);
  }
  t.equal(compared, ZONES.length * (INSTANTS.length + 200));
});

t.test("times in JSON as the original's (Go's RFC3339Nano): the stored digits, no trailing zeros", async (t) => {
  const cases: Array<[string, string]> = [
    ['2026-11-25 10:00:00.123456+00', '2026-11-25T10:00:00.123456Z'],
    ['2026-11-25 10:00:00.12345+00', '2026-11-25T10:00:00.12345Z'],
    ['2026-11-25 10:00:00.1234+00', '2026-11-25T10:00:00.1234Z'],
    ['2026-11-25 10:00:00.5+00', '2026-11-25T10:00:00.5Z'],
    ['2026-11-25 10:00:00.000001+00', '2026-11-25T10:00:00.000001Z'],
    ['2026-11-25 10:00:00.00012+00', '2026-11-25T10:00:00.00012Z'],
    ['2026-11-25 10:00:00+00', '2026-11-25T10:00:00Z'],
    ['2026-11-25 15:45:00.999999+05:45', '2026-11-25T10:00:00.999999Z'],
    ['1900-01-01 00:19:32.25+00:19:32', '1900-01-01T00:00:00.25Z'],
  ];
  for (const [text, json] of cases) {
    const date = parseTimestamptz(text);
    t.ok(date instanceof DbTimestamp, `${text}: a DbTimestamp`);
    t.equal(rfc3339Nano(date), json, text);
    t.equal(JSON.stringify({ at: date }), JSON.stringify({ at: json }), `${text}: JSON.stringify writes it so too`);
    t.equal(date.getTime(), Date.parse(json), `${text}: the Date is its millisecond`);
  }
  t.equal((parseTimestamptz('2026-11-25 10:00:00.123456+00') as DbTimestamp).microseconds, 456);
  // A Date made here has milliseconds only, written the same way.
  t.equal(rfc3339Nano(new Date('2026-11-25T10:00:00.120Z')), '2026-11-25T10:00:00.12Z');
  t.equal(rfc3339Nano(new Date('2026-11-25T10:00:00.000Z')), '2026-11-25T10:00:00Z');
  t.equal(rfc3339Nano(new Date('2026-11-25T10:00:00.007Z')), '2026-11-25T10:00:00.007Z');
  // Texts the library parses have no microseconds to keep: plain Dates, still written without trailing zeros.
  t.notOk(parseTimestamptz('12345-01-01 00:00:00.5+00') instanceof DbTimestamp);
});

t.test('the written date and time are the instant toISOString names, on every kind of day from 1970 to 9999', async (t) => {
  // Built from the instant's numbers rather than cut out of toISOString: the calendar's edges (leap days,
  // century years, the first and last instant it covers) and a spread of instants between, each against
  // toISOString's own date and time, with and without microseconds.
  const edges = [
    '1970-01-01T00:00:00.000Z',
    '1970-01-01T23:59:59.999Z',
    '1972-02-29T12:00:00.000Z',
    '1999-12-31T23:59:59.999Z',
    '2000-02-29T00:00:00.001Z',
    '2000-03-01T00:00:00.000Z',
    '2024-02-29T23:59:59.000Z',
    '2100-02-28T23:59:59.999Z',
    '2100-03-01T00:00:00.000Z',
    '2400-02-29T06:07:08.090Z',
    '9999-12-31T23:59:59.999Z',
  ].map((iso) => Date.parse(iso));
  const spread = Array.from({ length: 20_000 }, (_, i) => Math.floor((i / 20_000) * Date.UTC(10000, 0, 1)) + i * 37);
  const misses: string[] = [];
  for (const time of [...edges, ...spread]) {
    const iso = new Date(time).toISOString();
    const fraction = (iso.slice(20, 23) + '000').replace(/0+$/, '');
    const plain = `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
    if (rfc3339Nano(new Date(time)) !== plain) misses.push(`${iso} → ${rfc3339Nano(new Date(time))}`);
    const micro = new DbTimestamp(time, 40);
    if (rfc3339Nano(micro) !== `${iso.slice(0, 23)}04Z`) misses.push(`${iso} +40 µs → ${rfc3339Nano(micro)}`);
  }
  t.strictSame(misses, [], `${edges.length + spread.length} instants`);
  // Outside those years, toISOString's own extended forms, as before.
  t.equal(rfc3339Nano(new Date(Date.UTC(10000, 0, 1, 0, 0, 0, 500))), '+010000-01-01T00:00:00.500Z');
  t.equal(rfc3339Nano(new DbTimestamp(Date.UTC(1969, 11, 31, 23, 59, 59, 120), 300)), '1969-12-31T23:59:59.1203Z');
  t.throws(() => rfc3339Nano(new Date(NaN)), RangeError, 'an invalid Date is an error, as toISOString makes it');
});

t.test('shapes the fast path leaves to the library still parse as the library parses them', async (t) => {
  const texts = [
    '2026-11-25 10:00:00+00',
    '2026-11-25 10:00:00.123456-08',
    '2026-11-25 10:00:00.123+05:30',
    '1900-01-01 00:19:32+00:19:32',
    '2026-11-25 10:00:00.+00',
    '2026-11-25 10:00:00Z',
    '2026-11-25T10:00:00+00',
    '2026-11-25 10:00:00',
    '2026-11-25 10:00:00+0530',
    '2026-11-25 10:00:00+05:3',
    '2026-11-25 10:00:00+05:30 BC',
    '0099-01-01 00:00:00+00',
    '2026-11-25',
    '12345-01-01 00:00:00+00',
    'infinity',
    '-infinity',
    'Wed Nov 25 10:00:00 2026 UTC',
    '',
  ];
  for (const text of texts) t.equal(comparable(parseTimestamptz(text)), comparable(library(text)), JSON.stringify(text));
});

t.test('the pool parses timestamptz columns through it, and other types as pg does', async (t) => {
  t.equal(POOL_TYPES.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text'), parseTimestamptz);
  t.equal(POOL_TYPES.getTypeParser(pg.types.builtins.INT8, 'text'), pg.types.getTypeParser(pg.types.builtins.INT8, 'text'));
  t.equal(POOL_TYPES.getTypeParser(pg.types.builtins.TIMESTAMP, 'text'), pg.types.getTypeParser(pg.types.builtins.TIMESTAMP, 'text'));
  const pool = createPool({ url: process.env.TEST_DATABASE_URL!, max: 1, namespace: 'public' });
  t.teardown(() => pool.end());
  const { rows } = await pool.query<{ at: Date; text: string; big: string }>(
    `select v as at, v::text as text, 9007199254740993::int8 as big from (values ('2026-11-25 10:00:00.123456+00'::timestamptz)) s(v)`,
  );
  t.ok(rows[0].at instanceof Date);
  t.equal(rows[0].at.toISOString(), '2026-11-25T10:00:00.123Z');
  t.equal(rows[0].at.getTime(), (library(rows[0].text) as Date).getTime());
  t.equal(rows[0].big, '9007199254740993', 'int8 stays a string');
});
