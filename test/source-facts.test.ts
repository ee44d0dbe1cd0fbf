/**
 * Planning reads the source's extent, not the source: `plan` and `start` check the spec, and
 * the registering worker checks it again, so a whole-table scan there costs minutes twice per
 * start on a large table. Counted with the transaction's own table statistics.
 */
import type pg from 'pg';
import { PlanError } from '../src/compiler/plan-partitions';
import { readSourceFacts } from '../src/preflight/source-facts';
import type { Spec } from '../src/specs/schema';
import { resolveSpec, type ResolvedSpec } from '../src/specs/resolve';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;
let client: pg.PoolClient;

beforeAll(async () => {
  db = await createTestDatabase('facts');
  await db.pool.query(`
    CREATE TABLE public.events (id bigint PRIMARY KEY, at timestamptz, kind text NOT NULL);
    INSERT INTO public.events SELECT g, timestamptz '2024-01-01' + g * interval '1 minute', CASE WHEN g % 10 = 0 THEN 'test' ELSE 'real' END
      FROM generate_series(1, 50000) g;
    CREATE INDEX events_at ON public.events (at);
    ANALYZE public.events;
  `);
  client = await db.pool.connect();
});

afterAll(async () => {
  client?.release();
  await db?.drop();
});

function spec(partition: Record<string, unknown>, where?: string): ResolvedSpec {
  return resolveSpec({
    name: 'facts',
    reason: 'test',
    database: db.envVar,
    source: { table: 'public.events', key: 'id', ...(where ? { where } : {}) },
    partition,
    transform: { name: 't', version: 1, sql: 'SELECT c.id FROM chunk c' },
    target: { table: 'public.events', key: ['id'], mode: 'update' },
    limits: { chunkSize: 1000, concurrency: 1 },
  } as unknown as Spec);
}

/** The facts, and how many rows of the source they read (heap and index fetches, in this transaction). */
async function factsAndRowsRead(s: ResolvedSpec, columnType: string) {
  // the backend's counts not yet flushed to the shared statistics show here too: take the difference
  const read = async () =>
    Number(
      (
        await client.query<{ n: string }>(
          "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_xact_user_tables WHERE relid = 'public.events'::regclass",
        )
      ).rows[0].n,
    );
  await client.query('BEGIN');
  try {
    const before = await read();
    const facts = await readSourceFacts(client, s, columnType);
    return { facts, rowsRead: (await read()) - before };
  } finally {
    await client.query('ROLLBACK');
  }
}

test('time partitions: the extent and the infinity check read the two ends of the column index, not the table', async () => {
  const { facts, rowsRead } = await factsAndRowsRead(spec({ by: 'time', column: 'at', size: '1 day' }, "kind <> 'test'"), 'timestamp with time zone');
  expect(facts).toEqual({ kind: 'time', min: '2024-01-01T00:01:00.000Z', max: '2024-02-04T17:19:00.000Z', hasNulls: false });
  // two ends, the NULL probe, and the rows the filter skips at either end: a handful, never 50,000
  expect(rowsRead).toBeLessThan(10);
});

test('range partitions read the ends of the index too', async () => {
  const { facts, rowsRead } = await factsAndRowsRead(spec({ by: 'range', column: 'id', size: 1000 }), 'bigint');
  expect(facts).toEqual({ kind: 'range', min: '1', max: '50000', hasNulls: false });
  expect(rowsRead).toBeLessThan(10);
});

test.each(['infinity', '-infinity'])("'%s' at either end of a time column is still found and refused", async (value) => {
  await client.query('BEGIN');
  try {
    await client.query(`UPDATE public.events SET at = '${value}' WHERE id = 777`);
    await expect(readSourceFacts(client, spec({ by: 'time', column: 'at', size: '1 day' }), 'timestamp with time zone')).rejects.toThrow(
      new PlanError(
        'partition.column',
        "at holds 'infinity' or '-infinity' in scope, which no time partition can hold; exclude them with source.where (isfinite(at)), or partition by another column",
      ),
    );
  } finally {
    await client.query('ROLLBACK');
  }
});
