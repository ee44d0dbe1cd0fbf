/**
 * The worker process is killed with SIGKILL in the middle of partitions, twice, at
 * different points. After each restart the run resumes from the ledger's checkpoints
 * and ends exact: every partition succeeded exactly once, and the counts add up to the
 * source. Workers here are real processes (dist/worker.js), as operators deploy them.
 * A revert (docs/undo.md) killed the same way puts back every row exactly, and so does a run
 * whose partitions were killed in their first attempt, which runs as a local activity, and one
 * killed while a group of small partitions waited for its last member, the others done.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { localAttemptsOf } from './helpers/histories';
import { startRun, waitForResult } from '../src/operations';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { createOrders, diffAgainstExpected, ordersSpec, TRANSFORM_SQL, WHERE, writeSpec } from './helpers/orders';
import { getRun } from '../src/ledger/runs';
import { imagedRows } from '../src/undo/run-images';
import { revertRun } from '../src/undo/revert-run';
import { TEST_DATABASES, temporalAddress, testClient, uniqueQueue } from './helpers/temporal';

let db: TestDatabase;
let client: Client;
let closeClient: () => Promise<void>;
const taskQueue = uniqueQueue('crash');
const workers: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase('crash');
  await createOrders(db.pool, 200_000);
  ({ client, close: closeClient } = await testClient());
});

// a case that failed before its own kill must not leave its worker polling the next case's queue
afterEach(async () => {
  for (const w of workers) await kill(w);
});

afterAll(async () => {
  await closeClient?.();
  await db?.drop();
});

function startWorkerProcess(): ChildProcess {
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'dist', 'worker.js')], {
    env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), BACKFILL_TASK_QUEUE: taskQueue, BACKFILL_DATABASES: TEST_DATABASES, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  workers.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A partition's ledger row, as the cases read it back. */
interface PartitionOutcome {
  partition_id: string;
  status: string;
  completions: number;
  attempts: number;
  rows_read: number;
  rows_written: number;
  workflow_id: string;
}

/** The orders in some 65 partitions of 3,000 ids (about 965 rows each): small, unthrottled. */
function smallPartitionsSpec(name: string, limits: { chunkSize: number; concurrency: number }) {
  return ordersSpec(db.envVar, { name, partition: { by: 'range', column: 'id', size: 3000 }, limits });
}

async function ledger(runId: string) {
  const { rows } = await db.pool.query(
    `SELECT coalesce(sum(rows_read), 0)::int AS read,
            count(*) FILTER (WHERE status = 'running' AND chunks > 0)::int AS mid
       FROM backfill.partitions WHERE run_id = $1`,
    [runId],
  );
  return rows[0] as { read: number; mid: number };
}

async function waitForMidPartition(runId: string, minRows: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const l = await ledger(runId);
    if (l.read >= minRows && l.mid > 0) return;
    if (Date.now() > deadline) throw new Error(`run ${runId} never reached ${minRows} rows with a partition mid-way (${JSON.stringify(l)})`);
    await sleep(50);
  }
}

test('a worker killed with SIGKILL mid-partition, twice, leaves a run that resumes and writes every row exactly once', async () => {
  const spec = ordersSpec(db.envVar, {
    name: 'crash',
    partition: { by: 'range', column: 'id', size: 50_000 },
    limits: { chunkSize: 2000, concurrency: 3, rowsPerSecond: 25_000 },
  });
  let worker = startWorkerProcess();
  const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });

  await waitForMidPartition(started.runId, 40_000);
  await kill(worker);
  const afterFirst = await ledger(started.runId);
  worker = startWorkerProcess();

  await waitForMidPartition(started.runId, afterFirst.read + 60_000);
  await kill(worker);
  worker = startWorkerProcess();

  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });

  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS partitions,
            count(*) FILTER (WHERE status = 'succeeded' AND completions = 1)::int AS once,
            max(attempts)::int AS max_attempts,
            sum(rows_read)::int AS read, sum(rows_written)::int AS written
       FROM backfill.partitions WHERE run_id = $1`,
    [started.runId],
  );
  const source = await db.pool.query(`SELECT count(*)::int AS n FROM app.orders WHERE ${WHERE}`);
  expect(rows[0].once).toBe(rows[0].partitions);
  // the kills landed inside partitions: some partition needed more than one attempt
  expect(rows[0].max_attempts).toBeGreaterThan(1);
  // the target started empty, so every row was written exactly once
  expect(rows[0].read).toBe(source.rows[0].n);
  expect(rows[0].written).toBe(source.rows[0].n);
  await kill(worker);
});

test('a revert whose worker is killed with SIGKILL mid-partition resumes from its checkpoints and puts back every row exactly', async () => {
  // the target as the first test left it: exact. A second run doubles every amount; its revert must give this back
  await db.pool.query('DROP TABLE IF EXISTS app.before_wrong; CREATE TABLE app.before_wrong AS SELECT * FROM app.orders_usd');
  const wrong = ordersSpec(db.envVar, {
    name: 'crash-wrong',
    partition: { by: 'range', column: 'id', size: 50_000 },
    transform: { name: 'orders-usd', version: 2, sql: TRANSFORM_SQL.replace('round(c.amount_cents', '2 * round(c.amount_cents') },
    limits: { chunkSize: 2000, concurrency: 3, rowsPerSecond: 25_000 },
  });
  let worker = startWorkerProcess();
  const run = await startRun({ client, taskQueue }, { specFile: writeSpec(wrong), actor: 'test' });
  expect((await waitForResult(run.handle)).status).toBe('succeeded');

  const original = (await getRun(db.pool, run.runId))!;
  const revert = await revertRun({ client, pool: db.pool, taskQueue }, original, { reason: 'amounts doubled', actor: 'test' });
  await waitForMidPartition(revert.runId, 40_000);
  await kill(worker);
  worker = startWorkerProcess();
  const result = await waitForResult(revert.handle);
  expect(result.status).toBe('succeeded');

  const { rows: diff } = await db.pool.query(
    `SELECT (SELECT count(*) FROM (TABLE app.orders_usd EXCEPT ALL TABLE app.before_wrong) x)::int AS extra,
            (SELECT count(*) FROM (TABLE app.before_wrong EXCEPT ALL TABLE app.orders_usd) x)::int AS missing`,
  );
  expect(diff[0]).toEqual({ extra: 0, missing: 0 });
  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS partitions, count(*) FILTER (WHERE status = 'succeeded' AND completions = 1)::int AS once,
            max(attempts)::int AS max_attempts, sum(rows_read)::int AS read, sum(rows_written)::int AS written, sum(rows_skipped)::int AS conflicts
       FROM backfill.partitions WHERE run_id = $1`,
    [revert.runId],
  );
  const images = [{ n: await imagedRows(db.pool, original.run_id) }];
  expect(rows[0].once).toBe(rows[0].partitions);
  expect(rows[0].max_attempts).toBeGreaterThan(1);
  // every image restored once: none twice (the counts would exceed the images), none skipped
  expect({ read: rows[0].read, written: rows[0].written, conflicts: rows[0].conflicts }).toEqual({ read: images[0].n, written: images[0].n, conflicts: 0 });
  await kill(worker);
});

test('a worker killed under partitions running as local attempts: their workflow tasks time out, another worker runs them again from their checkpoints, and the run ends exact', async () => {
  await db.pool.query('TRUNCATE app.orders_usd');
  // small and unthrottled (~965 rows a partition, chunks of 500): each partition's first attempt runs
  // as its workflow's local activity (src/workflows/backfill-partition.ts)
  const spec = smallPartitionsSpec('crash-local', { chunkSize: 500, concurrency: 3 });
  let worker = startWorkerProcess();
  const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });
  // the first chunk of a partition committed, its second not yet: inside its local attempt
  await waitForMidPartition(started.runId, 1);
  await kill(worker);
  worker = startWorkerProcess();

  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  const { rows } = await db.pool.query<PartitionOutcome>(
    'SELECT partition_id, status, completions, attempts, rows_read::int, rows_written::int, workflow_id FROM backfill.partitions WHERE run_id = $1',
    [started.runId],
  );
  expect(rows.every((r) => r.status === 'succeeded' && r.completions === 1)).toBe(true);
  // the target started empty: every row written exactly once, across the attempts
  expect(rows.reduce((n, r) => n + r.rows_written, 0)).toBe(rows.reduce((n, r) => n + r.rows_read, 0));
  // the kill landed in a local attempt: the workflow task of its partition (or of the group it ran in:
  // a run of many small partitions) timed out, and the partition ran again there
  const timedOut = [];
  for (const r of rows.filter((p) => p.attempts > 1)) {
    const history = await client.workflow.getHandle(r.workflow_id).fetchHistory();
    const events = history.events!;
    const timeout = events.findIndex((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
    // the attempt the kill ended was local: no activity was scheduled before its task timed out (a
    // local attempt leaves no event until it completes). The attempt that finished it is local
    // again unless the new worker's local slots stayed taken (a loaded machine): then an activity
    if (timeout >= 0 && !events.slice(0, timeout).some((e) => e.activityTaskScheduledEventAttributes)) timedOut.push(r.partition_id);
  }
  expect(timedOut.length).toBeGreaterThan(0);
  await kill(worker);
});

test('a worker killed while a group waits for one held member, others finished: the group runs again, the finished members keep their one attempt, the run counts each once', async () => {
  await db.pool.query('TRUNCATE app.orders_usd');
  // some 65 one-chunk partitions: the run starts them four to a group (src/workflows/backfill-partition.ts)
  const spec = smallPartitionsSpec('crash-group', { chunkSize: 2000, concurrency: 4 });
  // an uncommitted row in the target holds one member's chunk at its write: the group's other
  // members finish, and the group waits for the held one before it reports
  const holder = await db.pool.connect();
  const source = await db.pool.query<{ id: string }>(`SELECT id FROM app.orders WHERE ${WHERE} AND id > 7600 ORDER BY id LIMIT 1`);
  const heldId = Number(source.rows[0].id);
  await holder.query('BEGIN');
  await holder.query('INSERT INTO app.orders_usd (id) VALUES ($1)', [heldId]);

  let worker = startWorkerProcess();
  let released = false;
  try {
    const started = await startRun({ client, taskQueue }, { specFile: writeSpec(spec), actor: 'test', partitionHeartbeatTimeoutMs: 3000 });
    const held = await waitForHeldInGroup(started.runId, heldId);
    const before = await client.workflow.getHandle(held.workflowId).fetchHistory();
    // the held member's first attempt is local unless it missed its local slot (a busy worker): then
    // the group reported its finished members and the held one runs as its activity
    const local = !before.events!.some((e) => e.activityTaskScheduledEventAttributes);
    // the group's report: from its task's local activity, or as a command when that failed
    const reports = (history: typeof before) =>
      localAttemptsOf(history, 'reportPartitions').length +
      history.events!.filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED).length;
    if (local) expect(reports(before)).toBe(0);
    await kill(worker);
    await holder.query('ROLLBACK');
    released = true;
    worker = startWorkerProcess();

    const result = await waitForResult(started.handle);
    expect(result.status).toBe('succeeded');
    const expected = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM app.orders WHERE ${WHERE}`);
    // counted once: a member reported twice would add its rows twice
    expect(result.rowsRead).toBe(expected.rows[0].n);
    expect(await diffAgainstExpected(db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: expected.rows[0].n });
    const { rows } = await db.pool.query<PartitionOutcome>(
      'SELECT partition_id, status, completions, attempts, rows_read::int, rows_written::int, workflow_id FROM backfill.partitions WHERE run_id = $1 AND workflow_id = $2',
      [started.runId, held.workflowId],
    );
    expect(rows).toHaveLength(held.members);
    expect(rows.every((r) => r.status === 'succeeded' && r.completions === 1)).toBe(true);
    expect(rows.reduce((n, r) => n + r.rows_written, 0)).toBe(rows.reduce((n, r) => n + r.rows_read, 0));
    // the members finished before the kill were not run again; the held one wrote its rows on a second attempt
    expect(rows.filter((r) => held.finished.includes(r.partition_id)).map((r) => r.attempts)).toEqual(held.finished.map(() => 1));
    expect(rows.find((r) => r.partition_id === held.partitionId)!.attempts).toBeGreaterThan(1);

    const history = await client.workflow.getHandle(held.workflowId).fetchHistory();
    expect(reports(history)).toBeGreaterThanOrEqual(1);
    // a local attempt dies with its worker: the group's task timed out and ran again on the new worker
    if (local) expect(history.events!.map((e) => e.eventType)).toContain(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
  } finally {
    if (!released) await holder.query('ROLLBACK');
    holder.release();
    await kill(worker);
  }
});

/** The held member's partition (`id:<lo>-<hi>`), once it runs in a group beside at least one member that finished. */
async function waitForHeldInGroup(runId: string, heldId: number): Promise<{ partitionId: string; workflowId: string; members: number; finished: string[] }> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await db.pool.query<{ partition_id: string; status: string; workflow_id: string | null }>(
      'SELECT partition_id, status, workflow_id FROM backfill.partitions WHERE run_id = $1',
      [runId],
    );
    const held = rows.find((r) => {
      const [lo, hi] = (/^id:(\d+)-(\d+)$/.exec(r.partition_id) ?? []).slice(1).map(Number);
      return lo <= heldId && heldId < hi;
    });
    if (!held) throw new Error(`no partition of run ${runId} holds id ${heldId}: ${rows.map((r) => r.partition_id).join(', ')}`);
    const group = held.workflow_id?.includes('/group/') ? held.workflow_id : undefined;
    const finished = rows.filter((r) => group && r.workflow_id === group && r.status === 'succeeded').map((r) => r.partition_id);
    if (group && held.status === 'running' && finished.length > 0) {
      const members = Number(/\+(\d+)-[0-9a-f]+$/.exec(group)![1]);
      return { partitionId: held.partition_id, workflowId: group, members, finished };
    }
    if (Date.now() > deadline)
      throw new Error(`run ${runId}: the held partition ${held.partition_id} never ran in a group beside a finished member (${JSON.stringify(held)})`);
    await sleep(25);
  }
}
