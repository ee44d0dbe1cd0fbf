/**
 * The demo's dataset is made once, by one maker at a time: two demos that find it missing at
 * the same moment (or a demo started while a stopped one's transaction still runs in the
 * server) must not race to create its schema; the second waits and uses what the first made.
 */
import pg from 'pg';
import { createPool } from '../src/db/pool';
import { DEMO_ROWS, ensureDemoData } from '../src/dev/demo-data';
import { ensureDatabase } from '../src/dev/postgres';

const DATABASE = 'backfill_demo_data_test';
let url: string;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: process.env.BACKFILL_TEST_PG_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.end();
  url = await ensureDatabase(process.env.BACKFILL_TEST_PG_URL!, DATABASE);
});

test('two demos making the dataset at once: one makes it, the other waits and finds it, both with every row', async () => {
  const [a, b] = [createPool(url, { max: 2 }), createPool(url, { max: 2 })];
  try {
    const made = await Promise.all([ensureDemoData(a), ensureDemoData(b)]);
    expect(made.map((m) => m.created).sort()).toEqual([false, true]);
    expect(made.map((m) => m.rows)).toEqual([DEMO_ROWS, DEMO_ROWS]);
    const { rows } = await a.query<{ orders: string; schemas: string }>(
      "SELECT (SELECT count(*) FROM demo.orders) AS orders, (SELECT count(*) FROM pg_namespace WHERE nspname = 'demo') AS schemas",
    );
    expect(rows[0]).toEqual({ orders: String(DEMO_ROWS), schemas: '1' });
    // a later demo uses it as it is
    expect(await ensureDemoData(a)).toEqual({ created: false, rows: DEMO_ROWS });
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
});

test('a dataset made alone is vacuumed as it is made: every page all-visible before the first run scans it', async () => {
  const pool = createPool(url, { max: 2 });
  try {
    await pool.query('DROP SCHEMA IF EXISTS demo CASCADE');
    expect(await ensureDemoData(pool)).toEqual({ created: true, rows: DEMO_ROWS });
    const { rows } = await pool.query<{ relpages: number; relallvisible: number }>(
      "SELECT relpages, relallvisible FROM pg_class WHERE oid = 'demo.orders'::regclass",
    );
    expect(rows[0].relpages).toBeGreaterThan(0);
    expect(rows[0].relallvisible).toBe(rows[0].relpages);
  } finally {
    await pool.end();
  }
});
