/**
 * `plan` measures Temporal's part of a partition on this deployment from the ledger's recent
 * runs instead of assuming another machine's figures: before any run it says it uses the
 * reference; after a real run of many partitions its projection uses that run's pace and says
 * so. A run that did not run as planned (paused, a live change of limits, a chunk that waited,
 * a failed or restarted partition, a second attempt, a revert, a rows/s cap, a month old, too few
 * partitions) is not measured by: each is the same real run's ledger rows, copied and then
 * disturbed in one way, beside an undisturbed copy that is measured.
 */
import { createPool } from '../src/db/pool';
import { recentUndisturbedRuns } from '../src/ledger/run-timings';
import { PACE_HISTORY, paceFactor, REFERENCE_GROUPED_PACE } from '../src/operations/orchestration-pace';
import { runCli } from './helpers/cli';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, writeSpec } from './helpers/orders';
import { uniqueName } from './helpers/unique';

const env = useTestEnvironment('pace', { rows: 30_000 });
const cli = (...args: string[]) => runCli(args, { BACKFILL_TASK_QUEUE: env.worker.taskQueue });
const spec = () =>
  writeSpec(
    ordersSpec(env.db.envVar, { name: 'pace-orders', partition: { by: 'range', column: 'id', size: 2_000 }, limits: { chunkSize: 1_000, concurrency: 2 } }),
  );
const planJson = async (file: string) => {
  const planned = await cli('plan', file, '-o', 'json');
  expect(planned.code).toBe(0);
  return JSON.parse(planned.stdout).estimate.projected;
};

let runId: string;

test('before any run the plan reckons with the reference and says why; after a run of many partitions, with what that run measured', async () => {
  const file = spec();
  const before = await planJson(file);
  expect(before.pace.basis).toEqual({ kind: 'reference' });
  expect(before.assumes.join('\n')).toContain("no recent undisturbed run of 12 partitions or more in this database's ledger");

  const started = await cli('start', file, '--wait');
  expect(started.code).toBe(0);
  const run = (await env.db.pool.query("SELECT run_id, partitions_total FROM backfill.runs WHERE name = 'pace-orders'")).rows[0];
  runId = run.run_id;
  expect(run.partitions_total).toBeGreaterThanOrEqual(12);
  const [timing] = await recentUndisturbedRuns(env.db.pool, PACE_HISTORY);
  // some 45 partitions of under a chunk each: the run started them in groups, and the ledger says so
  expect(timing).toMatchObject({ runId, partitions: run.partitions_total, concurrency: 2, grouped: true });
  expect(timing.chunkMs).toBeGreaterThan(0);
  expect(timing.spanMs).toBeGreaterThan(0);

  const after = await planJson(file);
  const factor = paceFactor(timing)!;
  expect(after.pace.basis).toEqual({ kind: 'measured', factor: expect.closeTo(factor, 6), runs: 1, newest: timing.finishedAt.toISOString() });
  // the plan is of the same run, which will start its partitions in groups: the grouped reference, scaled
  expect(before.pace.grouped).toBe(true);
  expect(after.pace.grouped).toBe(true);
  expect(after.pace.slotMs).toBeCloseTo(REFERENCE_GROUPED_PACE.slotMs * factor);
  expect(after.assumes.join('\n')).toContain(`${factor.toFixed(2)} × the reference, as measured from the last undisturbed run in this database's ledger`);
});

/** A copy of the real run's ledger rows under a new id, then one disturbance. */
async function copyOfTheRun(id: string, disturb?: string): Promise<string> {
  const copy = `${runId}-${id}`;
  const pool = env.db.pool;
  await pool.query(
    `INSERT INTO backfill.runs SELECT (jsonb_populate_record(NULL::backfill.runs,
        to_jsonb(r) || jsonb_build_object('run_id', $2::text, 'name', $2::text, 'workflow_id', 'copy/' || $2::text))).*
       FROM backfill.runs r WHERE run_id = $1`,
    [runId, copy],
  );
  await pool.query(
    `INSERT INTO backfill.partitions SELECT (jsonb_populate_record(NULL::backfill.partitions, to_jsonb(p) || jsonb_build_object('run_id', $2::text))).*
       FROM backfill.partitions p WHERE run_id = $1`,
    [runId, copy],
  );
  await pool.query(
    `INSERT INTO backfill.chunks SELECT (jsonb_populate_record(NULL::backfill.chunks, to_jsonb(c) || jsonb_build_object('run_id', $2::text))).*
       FROM backfill.chunks c WHERE run_id = $1`,
    [runId, copy],
  );
  if (disturb) await pool.query(disturb, [copy]);
  return copy;
}

test('a run that did not run as planned is not measured by; an undisturbed copy of it is', async () => {
  const undisturbed = await copyOfTheRun('undisturbed');
  const disturbed = [
    await copyOfTheRun('paused', "INSERT INTO backfill.run_events (run_id, kind, actor) VALUES ($1, 'paused', 'test')"),
    await copyOfTheRun('limits', "INSERT INTO backfill.run_events (run_id, kind, actor) VALUES ($1, 'limits-changed', 'test')"),
    await copyOfTheRun('waited', 'UPDATE backfill.chunks SET wait_ms = 250 WHERE run_id = $1 AND seq = 1'),
    await copyOfTheRun('attempt', 'UPDATE backfill.runs SET attempt = 2 WHERE run_id = $1'),
    // a partition restarted (its worker died, or an error was retried): its slot waited
    await copyOfTheRun('restarted', 'UPDATE backfill.partitions SET attempts = 2 WHERE run_id = $1 AND ordinal = 3'),
    await copyOfTheRun('revert', 'UPDATE backfill.runs SET reverts = run_id WHERE run_id = $1'),
    await copyOfTheRun('capped', `UPDATE backfill.runs SET limits = limits || '{"rowsPerSecond": 500}' WHERE run_id = $1`),
    await copyOfTheRun('old', "UPDATE backfill.runs SET finished_at = now() - interval '31 days' WHERE run_id = $1"),
    // a partition that failed (one more beside the copied ones: statuses only move forward)
    await copyOfTheRun(
      'failed',
      `INSERT INTO backfill.partitions (run_id, partition_id, ordinal, bounds, status, started_at, finished_at)
       VALUES ($1, 'failed-one', 1000, '{}', 'failed', now() - interval '1 second', now())`,
    ),
    // too few partitions to measure by: keep five
    await copyOfTheRun('few', 'DELETE FROM backfill.partitions WHERE run_id = $1 AND ordinal >= 5'),
  ];
  const measured = (await recentUndisturbedRuns(env.db.pool, { ...PACE_HISTORY, limit: 50 })).map((t) => t.runId);
  expect(measured).toEqual(expect.arrayContaining([runId, undisturbed]));
  for (const d of disturbed) expect(measured).not.toContain(d);
});

test('a role that may not read the ledger plans with the reference instead of failing', async () => {
  const role = uniqueName('bf_pace_reader');
  await env.db.pool.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader-pw'`);
  const url = new URL(env.db.url);
  url.username = role;
  url.password = 'reader-pw';
  const pool = createPool(url.toString(), { max: 1, applicationName: 'backfill-test' });
  try {
    await expect(pool.query('SELECT count(*) FROM backfill.runs')).rejects.toThrow('permission denied for schema backfill');
    expect(await recentUndisturbedRuns(pool, PACE_HISTORY)).toEqual([]);
  } finally {
    await pool.end();
    await env.db.pool.query(`DROP ROLE ${role}`);
  }
});
