/**
 * The benchmarks' dataset: bench.orders (BENCH_ROWS rows, default 2,000,000, with ~330-byte
 * jsonb payloads), FX rates, and the empty target bench.orders_usd.
 * Built once per size and reused (the table comment records its version and size).
 */
import type pg from 'pg';

export const ROWS = Number(process.env.BENCH_ROWS || 2_000_000);
/** Ids are n * 3 + n % 3 for n in 1..ROWS (sparse); partition sizes are planned to cover up to this one exactly. */
export const MAX_ID = ROWS * 3 + (ROWS % 3);
/**
 * How created_at follows the ids. `growing` (the default): as in an append-only table, time grows
 * with the id over 90 days, so a month's rows are one stretch of ids. `interleaved`: time cycles
 * every 86,400 rows (the layout measured before 2026-12-02's evening), so every month's rows are
 * spread over the whole id range. Only created_at differs; ids, payloads and sizes are the same.
 */
export const TIME_LAYOUT = parseLayout(process.env.BENCH_TIME_LAYOUT);
const DATASET = TIME_LAYOUT === 'interleaved' ? 'v2' : 'v3';
const CREATED_AT =
  TIME_LAYOUT === 'interleaved'
    ? "timestamptz '2024-01-01' + (n % 86400) * interval '90 seconds'"
    : `timestamptz '2024-01-01' + (n - 1) * (interval '90 days' / ${ROWS})`;

function parseLayout(value: string | undefined): 'growing' | 'interleaved' {
  if (value === undefined || value === '' || value === 'growing') return 'growing';
  if (value === 'interleaved') return value;
  throw new Error(`BENCH_TIME_LAYOUT must be growing or interleaved, not ${value}`);
}
const say = (line: string) => process.stderr.write(`${line}\n`);

// an enrichment: a field out of the jsonb payload, and an amount converted through a join
export const TRANSFORM = `SELECT c.id, c.tenant, c.created_at, c.payload->>'channel' AS channel, round(c.amount_cents * f.usd_rate / 100.0, 2) AS amount_usd
  FROM chunk c LEFT JOIN bench.fx f USING (currency)`;
export const WHOLE = TRANSFORM.replace('FROM chunk c', 'FROM bench.orders c');
export const COLS = 'id, tenant, created_at, channel, amount_usd';
export const GUARD = '(t.tenant, t.created_at, t.channel, t.amount_usd) IS DISTINCT FROM (o.tenant, o.created_at, o.channel, o.amount_usd)';

export async function createDataset(pool: pg.Pool): Promise<void> {
  const exists = (await pool.query<{ t: string | null }>("SELECT to_regclass('bench.orders')::text AS t")).rows[0].t;
  // the dataset's version: bump DATASET when its shape changes, so an old one is rebuilt
  const comment = exists ? (await pool.query<{ c: string | null }>("SELECT obj_description('bench.orders'::regclass) AS c")).rows[0].c : null;
  if (comment === `${DATASET}:${ROWS}`) return;
  say(`creating bench.orders with ${ROWS} rows (created_at ${TIME_LAYOUT})…`);
  await pool.query(`
    DROP SCHEMA IF EXISTS bench CASCADE;
    CREATE SCHEMA bench;
    CREATE TABLE bench.fx (currency text PRIMARY KEY, usd_rate numeric(12,6) NOT NULL);
    INSERT INTO bench.fx VALUES ('USD', 1), ('EUR', 1.0832), ('GBP', 1.265), ('JPY', 0.006712);
    CREATE TABLE bench.orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, tenant integer NOT NULL,
      currency text, amount_cents bigint, channel text, payload jsonb NOT NULL);
    INSERT INTO bench.orders
    SELECT n * 3 + n % 3, ${CREATED_AT}, 1 + n % 50,
           CASE WHEN n % 97 = 0 THEN NULL ELSE (ARRAY['USD','EUR','GBP','JPY','CHF'])[1 + n % 5] END,
           CASE WHEN n % 41 = 0 THEN NULL ELSE 100 + (n * 48271) % 900000 END,
           (ARRAY['web','app','pos'])[1 + n % 3],
           -- about 330 bytes of jsonb per row
           jsonb_build_object('sku', 'SKU-' || (n % 10000), 'qty', 1 + n % 7, 'channel', (ARRAY['web','app','pos'])[1 + n % 3],
             'customer', jsonb_build_object('id', n % 100000, 'country', (ARRAY['DE','FR','US','JP'])[1 + n % 4], 'segment', 'smb'),
             'lines', jsonb_build_array(jsonb_build_object('sku', 'A' || n % 97, 'qty', 1), jsonb_build_object('sku', 'B' || n % 89, 'qty', 2)),
             'note', md5(n::text) || md5((n + 1)::text) || md5((n + 2)::text))
      FROM generate_series(1::bigint, ${ROWS}) AS n;
    CREATE TABLE bench.orders_usd (id bigint PRIMARY KEY, tenant integer, created_at timestamptz, channel text, amount_usd numeric(14,2));
  `);
  await pool.query(`COMMENT ON TABLE bench.orders IS '${DATASET}:${ROWS}'`);
  await pool.query('VACUUM ANALYZE bench.orders');
}

/**
 * The same rows as bench.orders in a table partitioned by month on created_at, as the largest
 * historical tables are kept: primary key (id, created_at), since PostgreSQL makes a partitioned
 * table's unique keys include its partition key. created_at spans 90 days from 2024-01-01, so
 * three monthly leaves hold every row; a DEFAULT leaf stays empty, as one usually does.
 */
export async function createMonthlyDataset(pool: pg.Pool): Promise<void> {
  const version = `${DATASET}:${ROWS}`;
  const exists = (await pool.query<{ t: string | null }>("SELECT to_regclass('bench.orders_monthly')::text AS t")).rows[0].t;
  const comment = exists ? (await pool.query<{ c: string | null }>("SELECT obj_description('bench.orders_monthly'::regclass) AS c")).rows[0].c : null;
  if (comment === version) return;
  say(`creating bench.orders_monthly (the same ${ROWS} rows, one leaf a month)…`);
  await pool.query(`
    DROP TABLE IF EXISTS bench.orders_monthly;
    CREATE TABLE bench.orders_monthly (LIKE bench.orders INCLUDING DEFAULTS, PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
    CREATE TABLE bench.orders_2024_01 PARTITION OF bench.orders_monthly FOR VALUES FROM ('2024-01-01 00:00+00') TO ('2024-02-01 00:00+00');
    CREATE TABLE bench.orders_2024_02 PARTITION OF bench.orders_monthly FOR VALUES FROM ('2024-02-01 00:00+00') TO ('2024-03-01 00:00+00');
    CREATE TABLE bench.orders_2024_03 PARTITION OF bench.orders_monthly FOR VALUES FROM ('2024-03-01 00:00+00') TO ('2024-04-01 00:00+00');
    CREATE TABLE bench.orders_default PARTITION OF bench.orders_monthly DEFAULT;
    INSERT INTO bench.orders_monthly SELECT * FROM bench.orders;
  `);
  await pool.query(`COMMENT ON TABLE bench.orders_monthly IS '${version}'`);
  await pool.query('VACUUM ANALYZE bench.orders_monthly');
}
