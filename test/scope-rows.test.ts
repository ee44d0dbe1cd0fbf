/**
 * The exact count of a scope's rows, against PostgreSQL: it runs in one backend, without
 * parallel workers (a number that serves progress must not take cores from the application),
 * and leaves the session as it found it.
 */
import { createPool } from '../src/db/pool';
import { scopeRows } from '../src/preflight/scope-rows';
import type { ResolvedSpec } from '../src/specs/resolve';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('scoperows');
  await db.pool.query(`CREATE TABLE public.scoped (id bigint PRIMARY KEY, v integer NOT NULL);
    INSERT INTO public.scoped SELECT g, g % 7 FROM generate_series(1, 1000) g;
    ANALYZE public.scoped;`);
});

afterAll(async () => {
  await db?.drop();
});

const source = (where?: string) => ({ source: { table: 'public.scoped', key: ['id'], ...(where ? { where } : {}) } }) as Pick<ResolvedSpec, 'source'>;

test('counts the scope exactly, the filter included', async () => {
  expect(await scopeRows(db.pool, source())).toEqual({ rows: 1000, exact: true });
  expect(await scopeRows(db.pool, source('v = 3'))).toEqual({ rows: 143, exact: true });
});

test('the count runs without parallel workers, and the session keeps its own setting afterwards', async () => {
  // one connection, so the session read afterwards is the one that counted
  const pool = createPool(db.url, { max: 1 });
  try {
    await pool.query('SET max_parallel_workers_per_gather = 3');
    // the filter holds for every row only where the count's own setting is in force
    expect(await scopeRows(pool, source("current_setting('max_parallel_workers_per_gather') = '0'"))).toEqual({ rows: 1000, exact: true });
    expect(
      (await pool.query<{ max_parallel_workers_per_gather: string }>('SHOW max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather,
    ).toBe('3');
  } finally {
    await pool.end();
  }
});
