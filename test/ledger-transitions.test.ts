/**
 * The ledger enforces the status tables of src/domain/statuses.ts: every arrow they allow
 * is accepted by the database, every other status change is refused (by whatever writes
 * it), and the ledger's own functions never attempt a forbidden arrow.
 */
import type pg from 'pg';
import { createPool } from '../src/db/pool';
import { migrateLedger } from '../src/ledger/migrate';
import { finishPartition, startAttempt } from '../src/ledger/partitions';
import { transitionRun } from '../src/ledger/runs';
import { PARTITION_TRANSITIONS, PartitionStatus, RUN_TRANSITIONS, RunStatus } from '../src/domain/statuses';
import { createTestDatabase, type TestDatabase } from './helpers/db';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('transitions');
  await migrateLedger(db.pool);
});
afterAll(() => db?.drop());

async function insertRun(pool: pg.Pool, runId: string, status: string): Promise<void> {
  await pool.query(
    `INSERT INTO backfill.runs (run_id, name, workflow_id, reason, status, spec, spec_hash, transform_name, transform_version,
       transform_kind, transform_hash, database_var, limits, shape, partitions_total, started_by)
     VALUES ($1, $1, 'backfill/t/' || $1, 'test', $2, '{}', 'h', 't', 1, 'sql', 'h', 'DATABASE_URL', '{}', '{}', 1, 'test')`,
    [runId, status],
  );
}

let n = 0;
async function partitionIn(status: string): Promise<string> {
  const runId = `p${(n += 1)}`;
  // a finished run, so the partial unique index on active run names never gets in the way
  await insertRun(db.pool, runId, 'failed');
  await db.pool.query(`INSERT INTO backfill.partitions (run_id, partition_id, ordinal, bounds, status) VALUES ($1, 'x', 0, '{}', $2)`, [runId, status]);
  return runId;
}

function arrows<S extends string>(table: Readonly<Record<S, readonly S[]>>, statuses: S[], allowed: boolean): [S, S][] {
  return statuses.flatMap((from) => statuses.filter((to) => to !== from && table[from].includes(to) === allowed).map((to) => [from, to] as [S, S]));
}
const runStatuses = Object.values(RunStatus);
const partitionStatuses = Object.values(PartitionStatus);

test.each(arrows(RUN_TRANSITIONS, runStatuses, false))('a run cannot move from %s to %s', async (from, to) => {
  const runId = `r${(n += 1)}`;
  await insertRun(db.pool, runId, from);
  await expect(db.pool.query('UPDATE backfill.runs SET status = $2 WHERE run_id = $1', [runId, to])).rejects.toThrow(
    `run status cannot change from ${from} to ${to}`,
  );
  expect((await db.pool.query('SELECT status FROM backfill.runs WHERE run_id = $1', [runId])).rows[0].status).toBe(from);
});

test.each(arrows(RUN_TRANSITIONS, runStatuses, true))('a run may move from %s to %s', async (from, to) => {
  const runId = `r${(n += 1)}`;
  await insertRun(db.pool, runId, from);
  // RETURNING and a re-read: a trigger that silently dropped the UPDATE would pass a bare query
  const updated = await db.pool.query('UPDATE backfill.runs SET status = $2 WHERE run_id = $1 RETURNING status', [runId, to]);
  expect(updated.rows).toEqual([{ status: to }]);
  expect((await db.pool.query('SELECT status FROM backfill.runs WHERE run_id = $1', [runId])).rows[0].status).toBe(to);
});

test.each(arrows(PARTITION_TRANSITIONS, partitionStatuses, false))('a partition cannot move from %s to %s', async (from, to) => {
  const runId = await partitionIn(from);
  await expect(db.pool.query('UPDATE backfill.partitions SET status = $2 WHERE run_id = $1', [runId, to])).rejects.toThrow(
    `partition status cannot change from ${from} to ${to}`,
  );
  expect((await db.pool.query('SELECT status FROM backfill.partitions WHERE run_id = $1', [runId])).rows[0].status).toBe(from);
});

test.each(arrows(PARTITION_TRANSITIONS, partitionStatuses, true))('a partition may move from %s to %s', async (from, to) => {
  const runId = await partitionIn(from);
  const updated = await db.pool.query('UPDATE backfill.partitions SET status = $2 WHERE run_id = $1 RETURNING status', [runId, to]);
  expect(updated.rows).toEqual([{ status: to }]);
  expect((await db.pool.query('SELECT status FROM backfill.partitions WHERE run_id = $1', [runId])).rows[0].status).toBe(to);
});

test("the ledger's own writes only take allowed arrows: a forbidden one is a no-op that returns the row as it is", async () => {
  const pending = await partitionIn('pending');
  expect((await finishPartition(db.pool, pending, 'x', 'succeeded')).status).toBe('pending');
  const succeeded = await partitionIn('succeeded');
  expect((await startAttempt(db.pool, succeeded, 'x')).status).toBe('succeeded');
  expect((await finishPartition(db.pool, succeeded, 'x', 'failed', { message: 'late' })).status).toBe('succeeded');
  // a pending partition may fail before its first chunk (a refused transform)
  expect((await finishPartition(db.pool, pending, 'x', 'failed', { message: 'refused' })).status).toBe('failed');

  const runId = `r${(n += 1)}`;
  await insertRun(db.pool, runId, 'succeeded');
  expect(await transitionRun(db.pool, runId, 'running')).toBe('succeeded');
});

test('the database holds exactly the arrows of the code, re-synced on every migration', async () => {
  await db.pool.query("INSERT INTO backfill.status_transitions VALUES ('partition', 'succeeded', 'running')");
  await db.pool.query("DELETE FROM backfill.status_transitions WHERE entity = 'run' AND from_status = 'paused' AND to_status = 'running'");
  const pool = createPool(db.url, { max: 1 }); // migrating is remembered per pool: a new pool migrates again
  try {
    await migrateLedger(pool);
  } finally {
    await pool.end();
  }
  const { rows } = await db.pool.query<{ entity: string; from_status: string; to_status: string }>(
    'SELECT * FROM backfill.status_transitions ORDER BY 1, 2, 3',
  );
  const expected = [
    ...Object.entries(PARTITION_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => ({ entity: 'partition', from_status: from, to_status: to }))),
    ...Object.entries(RUN_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => ({ entity: 'run', from_status: from, to_status: to }))),
  ].sort((a, b) => `${a.entity} ${a.from_status} ${a.to_status}`.localeCompare(`${b.entity} ${b.from_status} ${b.to_status}`));
  expect(rows).toEqual(expected);
});
