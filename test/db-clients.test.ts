/**
 * The pooled-client helpers every transaction outside a chunk goes through: the next caller
 * never inherits a connection left mid-transaction, or one whose work failed.
 */
import { createPool, inTransaction, withClient, withTransaction } from '../src/db/pool';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('clients');
  await db.pool.query('CREATE TABLE public.t (v integer)');
});

afterAll(async () => {
  await db?.drop();
});

/** One connection at most, so the next checkout shows whether the last one came back. */
function onePool() {
  return createPool(db.url, { max: 1 });
}

const pid = (pool: ReturnType<typeof onePool>) => withClient(pool, async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);

test('a client whose work failed is discarded; one whose work succeeded is reused', async () => {
  const pool = onePool();
  try {
    const first = await pid(pool);
    expect(await pid(pool)).toBe(first);
    await expect(withClient(pool, async (c) => c.query('SELECT 1/0'))).rejects.toThrow('division by zero');
    expect(await pid(pool)).not.toBe(first);
  } finally {
    await pool.end();
  }
});

test('a transaction that throws is rolled back and its client comes back outside any transaction', async () => {
  const pool = onePool();
  try {
    const first = await pid(pool);
    await expect(
      withTransaction(pool, async (c) => {
        await c.query('INSERT INTO public.t VALUES (1)');
        throw new Error('the caller changed its mind');
      }),
    ).rejects.toThrow('the caller changed its mind');
    expect(await pid(pool)).toBe(first);
    expect(await withClient(pool, async (c) => (await c.query<{ s: string }>('SELECT count(*)::text AS s FROM public.t')).rows[0].s)).toBe('0');
    expect(await withClient(pool, async (c) => (await c.query<{ x: string }>('SELECT txid_current_if_assigned()::text AS x')).rows[0].x)).toBeNull();
  } finally {
    await pool.end();
  }
});

test("end: 'rollback' undoes even work that succeeded, and a committing transaction keeps it", async () => {
  const pool = onePool();
  try {
    const value = await inTransaction(pool, { begin: 'BEGIN; SET LOCAL statement_timeout = 5000', end: 'rollback' }, async (c) => {
      await c.query('INSERT INTO public.t VALUES (2)');
      return (await c.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")).rows[0].t;
    });
    expect(value).toBe('5s');
    await withTransaction(pool, (c) => c.query('INSERT INTO public.t VALUES (3)'));
    expect(await withClient(pool, async (c) => (await c.query<{ v: number }>('SELECT v FROM public.t ORDER BY v')).rows.map((r) => r.v))).toEqual([3]);
    // SET LOCAL ended with its transaction on the reused connection
    expect(await withClient(pool, async (c) => (await c.query<{ t: string }>("SELECT current_setting('statement_timeout') AS t")).rows[0].t)).toBe('0');
  } finally {
    await pool.end();
  }
});
