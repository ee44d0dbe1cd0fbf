/**
 * Live application writes during a chunk. A chunk reads, computes and writes in one
 * transaction with one snapshot (REPEATABLE READ): when the application changes a target row
 * after the chunk read its input, the chunk's write fails instead of overwriting the change
 * with a value computed from the older input, and the chunk is computed again from the new
 * state. Reproduced with a transform slow enough for the application to write meanwhile:
 * before, the run ended `succeeded` with the application's write lost and source and target
 * disagreeing.
 */
import { waitForResult } from '../src/operations';
import { pollUntil } from '../src/util/poll-until';
import { useTestEnvironment } from './helpers/environment';

const env = useTestEnvironment('concurrent', { rows: 10 });

beforeAll(async () => {
  await env.db.pool.query(`
    CREATE TABLE app.src (id integer PRIMARY KEY, v integer NOT NULL);
    INSERT INTO app.src SELECT g, g FROM generate_series(1, 200) g;
    CREATE TABLE app.dst (id integer PRIMARY KEY, w integer);
    INSERT INTO app.dst SELECT g, NULL FROM generate_series(1, 200) g;
  `);
});

function spec(name: string, mode: 'upsert' | 'update') {
  return {
    name,
    reason: 'test: application writes during a chunk',
    database: env.db.envVar,
    source: { table: 'app.src', key: 'id' },
    partition: { by: 'range', column: 'id', size: 1000 },
    transform: {
      name: 'double',
      version: 1,
      // sleeps once per chunk statement, after the chunk's snapshot: the window an application write lands in
      allowVolatile: true,
      sql: 'SELECT c.id, c.v * 2 AS w FROM chunk c CROSS JOIN (SELECT pg_sleep(1.5)) AS slow',
    },
    target: { table: 'app.dst', key: ['id'], mode },
    limits: { chunkSize: 1000, concurrency: 1 },
  };
}

/** Waits until a chunk's transform is sleeping, i.e. the chunk has read its input. */
async function chunkComputing(): Promise<void> {
  const seen = await pollUntil(
    async () => {
      const { rows } = await env.db.pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%pg_sleep(1.5)%' AND pid <> pg_backend_pid()",
      );
      return rows.length > 0 ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 20 },
  );
  if (!seen) throw new Error('no chunk started computing');
}

test.each(['upsert', 'update'] as const)(
  '%s: an application write to source and target during the chunk is kept, and source and target agree',
  async (mode) => {
    await env.db.pool.query('UPDATE app.src SET v = id; UPDATE app.dst SET w = NULL');
    const started = await env.start(spec(`concurrent-${mode}`, mode));
    await chunkComputing();
    // the application: one transaction changing a source row and its target row, as the issue reproduced
    await env.db.pool.query('BEGIN; UPDATE app.src SET v = 1000 WHERE id = 5; UPDATE app.dst SET w = 2000 WHERE id = 5; COMMIT');
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('succeeded');
    const { rows } = await env.db.pool.query<{ id: number; v: number; w: number | null }>(
      'SELECT s.id, s.v, d.w FROM app.src s JOIN app.dst d USING (id) WHERE d.w IS DISTINCT FROM s.v * 2',
    );
    expect(rows).toEqual([]);
    const { rows: ledger } = await env.db.pool.query('SELECT sum(concurrent_retries)::int AS n FROM backfill.partitions WHERE run_id = $1', [started.runId]);
    expect(ledger[0].n).toBeGreaterThanOrEqual(1);
  },
);

test('a backfill updating its own source table (update mode, target = source) never overwrites an application update', async () => {
  await env.db.pool.query('ALTER TABLE app.src ADD COLUMN w integer');
  const started = await env.start({
    ...spec('concurrent-self', 'update'),
    target: { table: 'app.src', key: ['id'], mode: 'update' },
  });
  await chunkComputing();
  await env.db.pool.query('UPDATE app.src SET v = 7000, w = 14000 WHERE id = 9');
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  const { rows } = await env.db.pool.query('SELECT id, v, w FROM app.src WHERE w IS DISTINCT FROM v * 2');
  expect(rows).toEqual([]);
});

test("a chunk whose partition's ledger row changed while it waited for it (a split, another attempt) is computed again, and not counted as the application's change", async () => {
  await env.db.pool.query('UPDATE app.src SET v = id; UPDATE app.dst SET w = NULL');
  // two chunks: the second asks for the partition's row while another transaction holds and changes it
  const started = await env.start({ ...spec('concurrent-own-row', 'upsert'), limits: { chunkSize: 100, concurrency: 1 } });
  await chunkComputing();
  const other = await env.db.pool.connect();
  try {
    await other.query('BEGIN');
    // waits for the first chunk's commit, then holds the row as limits.splitTail's cut does
    await other.query('SELECT 1 FROM backfill.partitions WHERE run_id = $1 FOR UPDATE', [started.runId]);
    await other.query('UPDATE backfill.partitions SET updated_at = now() WHERE run_id = $1', [started.runId]);
    const waiting = await pollUntil(
      async () => {
        const { rows } = await env.db.pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%backfill.partitions%' AND pid <> $1",
          [(other as unknown as { processID: number }).processID],
        );
        return rows.length > 0 ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 10 },
    );
    expect(waiting).toBe(true);
    await other.query('COMMIT');
  } finally {
    other.release();
  }
  expect(await waitForResult(started.handle)).toMatchObject({ status: 'succeeded', rowsWritten: 200 });
  const { rows } = await env.db.pool.query('SELECT id FROM app.src s JOIN app.dst d USING (id) WHERE d.w IS DISTINCT FROM s.v * 2');
  expect(rows).toEqual([]);
  // before, `status` said a chunk was "computed again because the application changed their rows"
  const { rows: ledger } = await env.db.pool.query('SELECT sum(concurrent_retries)::int AS n FROM backfill.partitions WHERE run_id = $1', [started.runId]);
  expect(ledger[0].n).toBe(0);
});
