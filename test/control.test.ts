/**
 * Operating a run on the real dev server: pause stops all writes within seconds and
 * resume completes exactly; cancel stops partitions at a chunk boundary; a second start
 * of the same spec is refused naming the active run; a data error fails only its own
 * partition, with the key range and message in the ledger and in `backfill status`.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { pauseUpdate, resumeUpdate } from '../src/workflows/messages';
import { controlRun, retryFailed, setRunLimits } from '../src/operations';
import { UsageError } from '../src/operations';
import { waitForResult } from '../src/operations';
import { statusReport } from '../src/operations';
import { renderStatus } from '../src/cli/render/status';
import { listEvents } from '../src/ledger/events';
import { getRun } from '../src/ledger/runs';
import { partitionWorkflowId } from '../src/domain/ids';
import type { SpecInput } from '../src/specs/schema';
import { diffAgainstExpected, ordersSpec, TRANSFORM_SQL, WHERE } from './helpers/orders';
import { useTestEnvironment } from './helpers/environment';
import { runCli } from './helpers/cli';
import { writeSpec } from './helpers/orders';
import { startTestWorker, uniqueQueue } from './helpers/temporal';
import { startRun } from '../src/operations';

const env = useTestEnvironment('control', { rows: 200_000 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything a write leaves behind: target rows, their newest xmin, and the ledger's counters. */
async function writeMark(): Promise<string> {
  const { rows } = await env.db.pool.query(
    `SELECT (SELECT count(*) FROM app.orders_usd) AS n, (SELECT max(xmin::text::bigint) FROM app.orders_usd) AS x,
            (SELECT coalesce(sum(chunks), 0) FROM backfill.partitions) AS chunks`,
  );
  return JSON.stringify(rows[0]);
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

async function rowsRead(runId: string): Promise<number> {
  const { rows } = await env.db.pool.query('SELECT coalesce(sum(rows_read), 0)::int AS n FROM backfill.partitions WHERE run_id = $1', [runId]);
  return rows[0].n;
}

function slowSpec(name: string): SpecInput {
  return ordersSpec(env.db.envVar, {
    name,
    partition: { by: 'range', column: 'id', size: 50_000 },
    limits: { chunkSize: 2000, concurrency: 3, rowsPerSecond: 30_000 },
  });
}

test('pause stops all writes within seconds; resume completes the run exactly; both are in the audit trail', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const started = await env.start(slowSpec('ctl-pause'));
  await waitUntil(async () => (await rowsRead(started.runId)) > 20_000);

  const run = (await getRun(env.db.pool, started.runId))!;
  const pausedAt = Date.now();
  expect(await controlRun({ client: env.client, pool: env.db.pool }, run, 'pause', { actor: 'alice', reason: 'replica lag' })).toEqual({ applied: true });

  // writes stop once the chunks in flight commit: wait for 3 quiet seconds, measuring how long that took
  let mark = await writeMark();
  let quietSince = Date.now();
  while (Date.now() - quietSince < 3000) {
    await sleep(100);
    const now = await writeMark();
    if (now !== mark) {
      mark = now;
      quietSince = Date.now();
    }
  }
  expect(quietSince - pausedAt).toBeLessThan(5000);
  await sleep(2000);
  expect(await writeMark()).toBe(mark);
  expect((await getRun(env.db.pool, started.runId))!.status).toBe('paused');

  // pausing again: the CLI refuses it (exit 2) with the reason, and so does the workflow's
  // validator for a client that skips the ledger's check, leaving nothing in history
  const again = await runCli(['pause', started.runId, '--database', env.db.envVar]);
  expect(again).toMatchObject({ code: 2 });
  expect(again.stderr).toContain(`run ctl-pause/${started.runId} is already paused; resume it with: backfill resume ${started.runId}`);
  const direct = started.handle.executeUpdate(pauseUpdate, { args: [{ actor: 'eve' }] });
  await expect(direct).rejects.toThrow(WorkflowUpdateFailedError);
  await expect(direct).rejects.toMatchObject({
    cause: { message: `run ${started.runId} is already paused by alice (replica lag); resume it with: backfill resume ${started.runId}` },
  });
  await expect(started.handle.executeUpdate(resumeUpdate, { args: [{ actor: 'eve' }] })).resolves.toMatchObject({ paused: false, cancelRequested: false });
  await expect(started.handle.executeUpdate(pauseUpdate, { args: [{ actor: 'alice', reason: 'replica lag' }] })).resolves.toEqual({
    status: 'paused',
    paused: true,
    cancelRequested: false,
  });

  await controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, started.runId))!, 'resume', { actor: 'bob', reason: 'lag recovered' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  const events = (await listEvents(env.db.pool, started.runId)).map((e) => [e.kind, e.actor, e.reason]);
  expect(events).toEqual([
    ['registered', 'test', 'test: recompute amount_usd'],
    ['started', 'test', 'test: recompute amount_usd'],
    ['paused', 'alice', 'replica lag'],
    ['resumed', 'eve', null],
    ['paused', 'alice', 'replica lag'],
    ['resumed', 'bob', 'lag recovered'],
    ['finished', 'backfill', null],
    // verified: the run's temporary state went
    ['cleaned', 'backfill', null],
  ]);
});

test('a second start of the same spec is refused naming the running run; cancel stops it at a chunk boundary', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = slowSpec('ctl-cancel');
  const first = await env.start(spec);
  const second = env.start(spec);
  await expect(second).rejects.toThrow(UsageError);
  await expect(second).rejects.toThrow(
    new RegExp(
      `^backfill ctl-cancel already has an active run ${first.runId} \\((pending|running), started by test at .*\\); wait for it, or cancel it with: backfill cancel ${first.runId} --reason "…"$`,
    ),
  );
  // another name on the same target is refused too: the two would mix their chunks
  const sameTarget = env.start({ ...spec, name: 'ctl-cancel-other' });
  await expect(sameTarget).rejects.toThrow(
    new RegExp(
      `^app\\.orders_usd is the target of active run ${first.runId} \\(ctl-cancel, (pending|running)\\); two runs on one target would mix their results chunk by chunk: wait for it, or cancel it with: backfill cancel ${first.runId} --reason "…"$`,
    ),
  );

  await waitUntil(async () => (await rowsRead(first.runId)) > 10_000);
  await controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, first.runId))!, 'cancel', {
    actor: 'carol',
    reason: 'wrong rates table',
  });
  const result = await waitForResult(first.handle);
  expect(result.status).toBe('cancelled');
  // cancelled through Temporal as well, so the Web UI and ExecutionStatus="Canceled" show it
  expect((await first.handle.describe()).status.name).toBe('CANCELLED');
  expect(result.partitions.cancelled).toBeGreaterThan(0);
  expect(result.partitions.succeeded + result.partitions.cancelled).toBe(result.partitions.total);
  // every committed chunk is in the target, nothing more: the counts agree with the rows written
  const { rows } = await env.db.pool.query('SELECT count(*)::int AS n FROM app.orders_usd');
  expect(rows[0].n).toBe(result.rowsWritten);
  expect(rows[0].n).toBeLessThan(result.rowsRead + 1);
  // one cancel, by the operator who asked: Temporal's cancellation that follows adds no event
  const cancels = (await listEvents(env.db.pool, first.runId)).filter((e) => e.kind === 'cancel-requested');
  expect(cancels.map((e) => [e.actor, e.reason])).toEqual([['carol', 'wrong rates table']]);
  await expect(controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, first.runId))!, 'pause', { actor: 'x' })).rejects.toThrow(
    `run ctl-cancel/${first.runId} already finished (cancelled); there is nothing to pause`,
  );
});

test('a data error fails only its partition, with key range and message in the ledger and in status', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = ordersSpec(env.db.envVar, {
    name: 'ctl-data-error',
    partition: { by: 'range', column: 'id', size: 100_000 },
    transform: {
      name: 'orders-usd-broken',
      version: 1,
      sql: TRANSFORM_SQL.replace('round(', 'coalesce(CASE WHEN c.id BETWEEN 250000 AND 250010 THEN 1 / (c.tenant - c.tenant) END, 0) + round('),
    },
  });
  const started = await env.start(spec);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('failed');
  expect(result.partitions.failed).toBe(1);
  expect(result.partitions.succeeded).toBe(result.partitions.total - 1);

  const { rows } = await env.db.pool.query(
    'SELECT partition_id, last_error, error_range, attempts FROM backfill.partitions WHERE run_id = $1 AND status = $2',
    [started.runId, 'failed'],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0].partition_id).toBe('id:000200000-000300000');
  expect(rows[0].attempts).toBe(1);
  expect(rows[0].error_range).toMatch(/^id in \(\d+, \d+\]$/);
  const [lo, hi] = rows[0].error_range.match(/\d+/g).map(Number);
  expect(lo).toBeLessThan(250_011);
  expect(hi).toBeGreaterThanOrEqual(250_000);
  expect(rows[0].last_error).toBe(
    `partition id:000200000-000300000 failed at ${rows[0].error_range}: division by zero (SQLSTATE 22012); the full error is in the ledger: backfill status ${started.runId}`,
  );

  const text = renderStatus(await statusReport(env.db.pool, (await getRun(env.db.pool, started.runId))!));
  expect(text).toContain('FAILED');
  // status reads the ledger's full error (error_detail), not the summary Temporal carries
  expect(text).toContain(
    `id:000200000-000300000 (1 attempt): partition id:000200000-000300000 failed at ${rows[0].error_range}: division by zero (SQLSTATE 22012)`,
  );
  // the other partitions are exact
  const diff = await env.db.pool.query(`SELECT count(*)::int AS n FROM app.orders_usd WHERE id >= 200000 AND id < 300000`);
  expect(diff.rows[0].n).toBeLessThan(100_000);
  const others = await diffAgainstExpected(env.db.pool, 'id < 200000 OR id >= 300000');
  expect(others).toMatchObject({ missing: 0, extra: 0 });
});

async function runningPartitions(runId: string): Promise<number> {
  const { rows } = await env.db.pool.query("SELECT count(*)::int AS n FROM backfill.partitions WHERE run_id = $1 AND status = 'running'", [runId]);
  return rows[0].n;
}

async function maxOver(ms: number, sample: () => Promise<number>): Promise<number> {
  let max = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    max = Math.max(max, await sample());
    await sleep(50);
  }
  return max;
}

/** The size of the newest committed chunk of each running partition (null: none committed yet). */
async function newestChunkSizes(runId: string): Promise<(number | null)[]> {
  const { rows } = await env.db.pool.query(
    `SELECT (SELECT c.chunk_size FROM backfill.chunks c WHERE c.run_id = p.run_id AND c.partition_id = p.partition_id ORDER BY c.seq DESC LIMIT 1) AS size
       FROM backfill.partitions p WHERE p.run_id = $1 AND p.status = 'running'`,
    [runId],
  );
  return rows.map((r) => r.size);
}

async function chunkTotals(runId: string): Promise<{ rows: number; chunks: number }> {
  const { rows } = await env.db.pool.query(
    'SELECT coalesce(sum(rows_read), 0)::int AS rows, coalesce(sum(chunks), 0)::int AS chunks FROM backfill.partitions WHERE run_id = $1',
    [runId],
  );
  return rows[0];
}

test('setLimits changes concurrency and chunk size of a running run; invalid changes are rejected and leave no trace in history', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = ordersSpec(env.db.envVar, {
    name: 'ctl-limits',
    partition: { by: 'range', column: 'id', size: 25_000 },
    limits: { chunkSize: 2000, concurrency: 1, rowsPerSecond: 20_000 },
  });
  const started = await env.start(spec);
  await waitUntil(async () => (await runningPartitions(started.runId)) > 0);
  expect(await maxOver(1500, () => runningPartitions(started.runId))).toBe(1);

  let run = (await getRun(env.db.pool, started.runId))!;
  const limits = await setRunLimits({ client: env.client }, run, { concurrency: 3, rowsPerSecond: 15_000, actor: 'dana', reason: 'off-peak' });
  expect(limits).toEqual({ concurrency: 3, chunkSize: 2000, rowsPerSecond: 15_000 });
  expect((await getRun(env.db.pool, started.runId))!.limits).toEqual(limits);
  // a state, not a time: three partitions running (however slow the machine), and never more
  await waitUntil(async () => (await runningPartitions(started.runId)) === 3);
  expect(await maxOver(1500, () => runningPartitions(started.runId))).toBeLessThanOrEqual(3);

  await setRunLimits({ client: env.client }, run, { chunkSize: 500, actor: 'dana', reason: 'smaller transactions' });
  // the chunk in flight when the change landed may still be the old size: measure once every
  // running partition has committed one at the new size, since each chunk reads the limits anew
  await waitUntil(async () => (await newestChunkSizes(started.runId)).every((size) => size !== null && size <= 500));
  const before = await chunkTotals(started.runId);
  await waitUntil(async () => (await chunkTotals(started.runId)).chunks >= before.chunks + 3);
  const after = await chunkTotals(started.runId);
  expect((after.rows - before.rows) / (after.chunks - before.chunks)).toBeLessThanOrEqual(500);

  await expect(setRunLimits({ client: env.client }, run, { concurrency: 0, actor: 'dana' })).rejects.toThrow(
    `cannot change the limits of ctl-limits/${started.runId}: concurrency must be an integer from 1 to 500 (got 0)`,
  );
  // the workflow's own validator refuses what a client that skips the check sends
  const rejected = started.handle.executeUpdate('setLimits', { args: [{ chunkSize: -5, actor: 'eve' }] });
  await expect(rejected).rejects.toThrow(WorkflowUpdateFailedError);
  await expect(rejected).rejects.toMatchObject({ cause: { message: 'chunkSize must be an integer from 1 to 1000000 (got -5)' } });

  run = (await getRun(env.db.pool, started.runId))!;
  if (run.status === 'running') await controlRun({ client: env.client, pool: env.db.pool }, run, 'cancel', { actor: 'test', reason: 'enough' });
  await waitForResult(started.handle);
  const history = await started.handle.fetchHistory();
  const accepted = history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'setLimits').length;
  expect(accepted).toBe(2);
  const changes = (await listEvents(env.db.pool, started.runId)).filter((e) => e.kind === 'limits-changed');
  expect(changes.map((e) => [e.actor, e.reason, e.detail])).toEqual([
    ['dana', 'off-peak', { from: { concurrency: 1, chunkSize: 2000, rowsPerSecond: 20_000 }, to: { concurrency: 3, chunkSize: 2000, rowsPerSecond: 15_000 } }],
    [
      'dana',
      'smaller transactions',
      { from: { concurrency: 3, chunkSize: 2000, rowsPerSecond: 15_000 }, to: { concurrency: 3, chunkSize: 500, rowsPerSecond: 15_000 } },
    ],
  ]);
});

/** The retry case's scope: its first seven days. */
const RETRY_SCOPE = `${WHERE} AND created_at < '2024-03-08'`;

test('retry-failed re-runs only the failed partition, after the data is fixed, and leaves succeeded partitions untouched (a run id of the older, four-digit form)', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  // one bad row the transform cannot handle, in the fourth chunk of the last day: the operator fixes it between attempts
  const bad = (
    await env.db.pool.query(
      `SELECT id, currency FROM app.orders WHERE ${RETRY_SCOPE} AND created_at >= '2024-03-07' AND currency IS NOT NULL ORDER BY created_at, id OFFSET 3500 LIMIT 1`,
    )
  ).rows[0];
  await env.db.pool.query("UPDATE app.orders SET currency = 'XXX' WHERE id = $1", [bad.id]);
  const spec = ordersSpec(env.db.envVar, {
    name: 'ctl-retry',
    // seven days (about 23,600 rows; the last 6,278), in chunks small enough that the failed day resumes from a (created_at, id) cursor mid-way
    source: { table: 'app.orders', key: 'id', where: RETRY_SCOPE },
    partition: { by: 'time', column: 'created_at', size: '1 day' },
    limits: { chunkSize: 1000, concurrency: 4 },
    transform: {
      name: 'orders-usd-strict',
      version: 1,
      sql: TRANSFORM_SQL.replace('round(', "coalesce(CASE WHEN c.currency = 'XXX' THEN 1 / (c.tenant - c.tenant) END, 0) + round("),
    },
  });
  // ids made before 64-bit run ids (YYYYMMDD-HHMM-xxxx) keep working in start, retry-failed, status and verify
  const started = await env.start(spec, { runId: '20261202-0301-42ca' });
  const first = await waitForResult(started.handle);
  expect(first.status).toBe('failed');
  expect(first.partitions.failed).toBe(1);
  const failed = (await env.db.pool.query("SELECT cursor, error_range FROM backfill.partitions WHERE run_id = $1 AND status = 'failed'", [started.runId]))
    .rows[0];
  expect(failed.error_range).toMatch(/^\(created_at, id\) in \(\["[^"]+", ?"\d+"\], \["[^"]+", ?"\d+"\]\]$/);
  // three chunks of the day committed before the bad row: the retry resumes from their cursor
  expect(failed.cursor).not.toBeNull();

  const { rows: succeededBefore } = await env.db.pool.query(
    "SELECT partition_id, completions, rows_written FROM backfill.partitions WHERE run_id = $1 AND status = 'succeeded' ORDER BY ordinal",
    [started.runId],
  );
  const xminBefore = (await env.db.pool.query('SELECT id, xmin::text AS x FROM app.orders_usd ORDER BY id')).rows;

  await env.db.pool.query('UPDATE app.orders SET currency = $2 WHERE id = $1', [bad.id, bad.currency]);
  let run = (await getRun(env.db.pool, started.runId))!;
  const retry = await retryFailed({ client: env.client, pool: env.db.pool, taskQueue: env.worker.taskQueue }, run, {
    actor: 'frank',
    reason: 'fixed order currency',
  });
  expect(retry).toMatchObject({ attempt: 2, partitions: 1 });
  const second = await waitForResult(retry.handle);
  expect(second.status).toBe('succeeded');
  expect(second.partitions).toEqual({ total: first.partitions.total, succeeded: first.partitions.total, failed: 0, cancelled: 0 });
  expect(first.partitions.total).toBe(7);
  const diff = await diffAgainstExpected(env.db.pool, "created_at < '2024-03-08'");
  expect(diff).toMatchObject({ missing: 0, extra: 0, targetRows: diff.expectedRows });
  expect((await env.db.pool.query('SELECT count(*)::int AS n FROM app.orders_usd')).rows[0].n).toBe(diff.targetRows);
  // Temporal's view: the first execution Failed, the retry (a new execution of the same workflow id) Completed,
  // and a query for failed executions finds the first one only
  expect((await env.client.workflow.getHandle(started.workflowId, started.handle.firstExecutionRunId).describe()).status.name).toBe('FAILED');
  expect((await retry.handle.describe()).status.name).toBe('COMPLETED');
  const failedExecutions: string[] = [];
  await waitUntil(async () => {
    failedExecutions.length = 0;
    for await (const w of env.client.workflow.list({ query: `WorkflowId = "${started.workflowId}" AND ExecutionStatus = "Failed"` }))
      failedExecutions.push(w.runId);
    return failedExecutions.length > 0;
  });
  expect(failedExecutions).toEqual([started.handle.firstExecutionRunId]);

  // succeeded partitions were not run again, and their target rows were not rewritten
  const { rows: succeededAfter } = await env.db.pool.query(
    'SELECT partition_id, completions, rows_written FROM backfill.partitions WHERE run_id = $1 AND partition_id = ANY($2) ORDER BY ordinal',
    [started.runId, succeededBefore.map((p) => p.partition_id)],
  );
  expect(succeededAfter).toEqual(succeededBefore);
  const xminAfter = new Map((await env.db.pool.query('SELECT id, xmin::text AS x FROM app.orders_usd')).rows.map((r) => [r.id, r.x]));
  for (const r of xminBefore) expect(xminAfter.get(r.id)).toBe(r.x);

  run = (await getRun(env.db.pool, started.runId))!;
  expect(run).toMatchObject({ status: 'succeeded', attempt: 2 });
  const events = (await listEvents(env.db.pool, started.runId)).map((e) => [e.kind, e.actor, e.reason]);
  expect(events.slice(-4)).toEqual([
    ['finished', 'backfill', null],
    ['retry', 'frank', 'fixed order currency'],
    ['finished', 'backfill', null],
    ['cleaned', 'backfill', null],
  ]);
  await expect(retryFailed({ client: env.client, pool: env.db.pool, taskQueue: env.worker.taskQueue }, run, { actor: 'x' })).rejects.toThrow(
    `run ctl-retry/${started.runId} succeeded; there is nothing to retry`,
  );
  const status = await runCli(['status', '20261202-0301-42ca', '--database', env.db.envVar, '-o', 'json']);
  expect(status.code).toBe(0);
  expect(JSON.parse(status.stdout)).toMatchObject({ runId: '20261202-0301-42ca', status: 'succeeded' });
  expect(await runCli(['verify', '20261202-0301-42ca', '--database', env.db.envVar])).toMatchObject({ code: 0 });
});

test('outside its allowed hours a run holds, says why in status, and continues when the window changes to include now', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const now = new Date();
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  // a window that opens in two hours (UTC) and lasts one
  const window = { start: hhmm(new Date(now.getTime() + 2 * 3600_000)), end: hhmm(new Date(now.getTime() + 3 * 3600_000)), timeZone: 'UTC' };
  const spec = ordersSpec(env.db.envVar, { name: 'ctl-window', limits: { chunkSize: 10_000, concurrency: 2, window } });
  const started = await env.start(spec);
  await waitUntil(async () => (await runningPartitions(started.runId)) > 0);
  await sleep(2500);
  expect(await chunkTotals(started.runId)).toEqual({ rows: 0, chunks: 0 });
  const text = renderStatus(await statusReport(env.db.pool, (await getRun(env.db.pool, started.runId))!));
  expect(text).toMatch(new RegExp(`holding: +outside the allowed hours \\(${window.start}–${window.end} UTC\\); continues by itself at `));

  await setRunLimits({ client: env.client }, (await getRun(env.db.pool, started.runId))!, { window: null, actor: 'gina', reason: 'approved daytime run' });
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: result.rowsRead });
  const change = (await listEvents(env.db.pool, started.runId)).find((e) => e.kind === 'limits-changed');
  expect(change).toMatchObject({ actor: 'gina', reason: 'approved daytime run', detail: { to: { concurrency: 2, chunkSize: 10_000 } } });
});

test('a partition workflow terminated by hand is found, recorded failed with the way out, and retry-failed finishes the run exact', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const spec = ordersSpec(env.db.envVar, {
    name: 'ctl-terminated',
    partition: { by: 'range', column: 'id', size: 200_000 },
    limits: { chunkSize: 1000, concurrency: 4, rowsPerSecond: 30_000 },
  });
  const started = await env.start(spec, { reconcileIntervalMs: 1000 });
  const running = async () =>
    (
      await env.db.pool.query<{ partition_id: string }>(
        "SELECT partition_id FROM backfill.partitions WHERE run_id = $1 AND status = 'running' AND chunks > 2 ORDER BY ordinal",
        [started.runId],
      )
    ).rows;
  const deadline = Date.now() + 30_000;
  while ((await running()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const [victim] = await running();
  // an operator (or a retention policy) ends the partition's workflow: it never reports to its run
  await env.client.workflow.getHandle(partitionWorkflowId('ctl-terminated', started.runId, victim.partition_id)).terminate('test: terminated by hand');

  const first = await waitForResult(started.handle);
  expect(first.status).toBe('failed');
  expect(first.partitions.failed).toBe(1);
  const { rows } = await env.db.pool.query('SELECT status, last_error FROM backfill.partitions WHERE run_id = $1 AND partition_id = $2', [
    started.runId,
    victim.partition_id,
  ]);
  expect(rows[0]).toEqual({
    status: 'failed',
    last_error: `partition workflow ${partitionWorkflowId('ctl-terminated', started.runId, victim.partition_id)} ended terminated without reporting (terminated by hand?); backfill retry-failed ${started.runId} re-runs it from its cursor`,
  });

  const retry = await retryFailed({ client: env.client, pool: env.db.pool, taskQueue: env.worker.taskQueue }, (await getRun(env.db.pool, started.runId))!, {
    actor: 'gil',
    reason: 'partition was terminated',
  });
  const second = await waitForResult(retry.handle);
  expect(second.status).toBe('succeeded');
  expect(await diffAgainstExpected(env.db.pool)).toMatchObject({ missing: 0, extra: 0, targetRows: second.rowsRead });
  const { rows: completions } = await env.db.pool.query('SELECT DISTINCT completions FROM backfill.partitions WHERE run_id = $1', [started.runId]);
  expect(completions).toEqual([{ completions: 1 }]);
});

test('with no worker to answer, pause falls back to the signal: not applied yet, and applied once a worker takes the run', async () => {
  await env.db.pool.query('TRUNCATE app.orders_usd');
  const own = await startTestWorker(uniqueQueue('ctl-noworker'));
  const started = await startRun({ client: env.client, taskQueue: own.taskQueue }, { specFile: writeSpec(slowSpec('ctl-noworker')), actor: 'test' });
  await waitUntil(async () => (await rowsRead(started.runId)) > 5_000);
  await own.stop();
  const run = (await getRun(env.db.pool, started.runId))!;
  // nobody answers the update within the timeout: the pause goes as a signal, kept in the run's history
  expect(await controlRun({ client: env.client, pool: env.db.pool }, run, 'pause', { actor: 'gina', reason: 'no worker' }, 3_000)).toEqual({ applied: false });
  expect((await getRun(env.db.pool, started.runId))!.paused).toBe(false);
  const back = await startTestWorker(own.taskQueue);
  try {
    await waitUntil(async () => (await getRun(env.db.pool, started.runId))!.paused === true);
    const pauses = (await listEvents(env.db.pool, started.runId)).filter((e) => e.kind === 'paused');
    expect(pauses.map((e) => [e.actor, e.reason])).toEqual([['gina', 'no worker']]);
    await controlRun({ client: env.client, pool: env.db.pool }, (await getRun(env.db.pool, started.runId))!, 'cancel', { actor: 'test', reason: 'done' });
    expect((await waitForResult(started.handle)).status).toBe('cancelled');
  } finally {
    await back.stop();
  }
});
