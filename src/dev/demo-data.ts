/**
 * The demo dataset: about 1.2 million orders with sparse ids, NULL amounts and
 * currencies, skewed days (recent days are much busier) and test orders the spec
 * filters out; FX rates; and the empty target. Created once; later demos reuse it
 * (a table comment records the version; an older one is rebuilt).
 *
 * Ids grow with created_at, as order ids do (version 1 scattered them over all days).
 */
import type pg from 'pg';

export const DEMO_ROWS = 1_200_000;
const VERSION = 'demo-v2';

/** Held while the dataset is made, so that two demos never make it at once. */
const MAKING_LOCK = "hashtext('backfill: the demo dataset')";

export async function ensureDemoData(pool: pg.Pool, say: (line: string) => void = () => undefined): Promise<{ created: boolean; rows: number }> {
  const found = await existingDemoData(pool);
  if (found) return found;
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    // one maker at a time: a demo stopped while it makes the data leaves its statement running
    // in the server until the server notices; the next demo waits for it and looks again, where
    // it raced it and failed on a schema created twice. A session lock: the look after the wait
    // must be a transaction of its own to see what the maker it waited for committed
    await client.query(`SELECT pg_advisory_lock(${MAKING_LOCK})`);
    const madeMeanwhile = await existingDemoData(client);
    if (madeMeanwhile) return madeMeanwhile;
    say(`Creating the demo dataset (${DEMO_ROWS.toLocaleString('en-US')} orders)…`);
    await client.query('BEGIN');
    await client.query(`
      DROP SCHEMA IF EXISTS demo CASCADE;
      CREATE SCHEMA demo;
      CREATE TABLE demo.fx_rates (currency text PRIMARY KEY, usd_rate numeric(12,6) NOT NULL);
      INSERT INTO demo.fx_rates VALUES ('USD', 1), ('EUR', 1.0832), ('GBP', 1.2650), ('JPY', 0.006712), ('CHF', 1.1275);
      -- its primary key is built after the load, in one pass: a quarter faster than keeping it up
      -- row by row (about a second of a first demo)
      CREATE TABLE demo.orders (
        id bigint NOT NULL,
        created_at timestamptz NOT NULL,
        currency text,
        amount_cents bigint,
        status text NOT NULL
      );
      -- sparse ids (gaps of 1..7) growing with time, 90 days skewed towards the end (a day late in the
      -- quarter has over 100x the orders of the first), ~2% NULL amounts, ~1% NULL currency, ~3% test orders
      INSERT INTO demo.orders
      SELECT n * 4 + (n * 7919) % 4,
             timestamptz '2024-01-01' + (90 * sqrt(n / ${DEMO_ROWS}.0)) * interval '1 day',
             CASE WHEN n % 100 = 0 THEN NULL ELSE (ARRAY['USD','EUR','GBP','JPY','CHF','EUR','USD'])[1 + (n * 31) % 7] END,
             CASE WHEN n % 50 = 7 THEN NULL ELSE 100 + (n * 48271) % 500000 END,
             CASE WHEN n % 33 = 0 THEN 'test' ELSE 'paid' END
        FROM generate_series(1::bigint, ${DEMO_ROWS}) AS n;
      ALTER TABLE demo.orders ADD PRIMARY KEY (id);
      CREATE INDEX ON demo.orders (created_at);
      CREATE TABLE demo.orders_usd (id bigint PRIMARY KEY, currency text, amount_usd numeric(14,2));
      COMMENT ON TABLE demo.orders IS '${VERSION}';
    `);
    await client.query('COMMIT');
  } catch (err) {
    failed = err as Error;
    throw err;
  } finally {
    // a session lock outlives the session's return to the pool: a failed session is closed
    // instead, which frees it and rolls back what it began
    if (!failed) await client.query(`SELECT pg_advisory_unlock(${MAKING_LOCK})`).catch((err: Error) => (failed = err));
    client.release(failed);
  }
  // as autovacuum leaves a loaded table: hint bits set and the visibility map filled, so the
  // demo's first run is not the one that pays for them (its index-only scans visit no heap)
  await pool.query('VACUUM (ANALYZE) demo.orders');
  return { created: true, rows: DEMO_ROWS };
}

async function existingDemoData(db: pg.Pool | pg.PoolClient): Promise<{ created: false; rows: number } | undefined> {
  const { rows: existing } = await db.query<{ t: string | null; c: string | null }>(
    "SELECT to_regclass('demo.orders')::text AS t, obj_description(to_regclass('demo.orders'), 'pg_class') AS c",
  );
  if (!existing[0].t || existing[0].c !== VERSION) return undefined;
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM demo.orders');
  return { created: false, rows: Number(rows[0].n) };
}
