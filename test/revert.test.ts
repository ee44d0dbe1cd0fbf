/**
 * `backfill revert` on the real servers (docs/undo.md), on the line-totals table (quoted
 * mixed-case names, a composite key, numeric and timestamp(3), a column no run writes): a run
 * with a wrong transform, then its revert — the target equals its snapshot from before the run,
 * row for row, in every write mode. Rows the application changed in between are conflicts: left
 * exactly as the application left them, their keys in the ledger, every other row restored.
 * Replace mode restores a partition whole or not at all. The revert pauses and resumes like any
 * run, after-actions run again after it, and a run past its window is refused with the date.
 */
import type { Client } from '@temporalio/client';
import { waitForResult } from '../src/operations';
import { controlRun } from '../src/operations/control';
import { revertRun } from '../src/undo/revert-run';
import { statusReportFor } from '../src/operations/status';
import { getRun } from '../src/ledger/runs';
import { stalePartitions } from '../src/ledger/stale';
import { renderStatus } from '../src/cli/render/status';
import { cleanupRun } from '../src/after-actions/cleanup-run';
import { sweepExpiredImages } from '../src/undo/image-retention';
import { servedDatabases } from '../src/security/worker-trust';
import { useTestEnvironment } from './helpers/environment';
import { imagedRows } from '../src/undo/run-images';
import { runCli, runCliOnTerminal } from './helpers/cli';
import { CHANGES, LINES, ORDERS, createLineTotals, differences, lineTotalsSpec, seedLineTotals, snapshotLineTotals, TARGET } from './helpers/line-totals';
import type { SpecInput } from '../src/specs/schema';

const env = useTestEnvironment('revert', { rows: 0 });
/** A transform that is wrong on purpose: totals doubled, notes lower-cased. */
const WRONG = `SELECT order_id, line_no, (2 * qty * price)::numeric(12,2) AS total, lower(sku) AS note, placed_at AS "updatedAt" FROM chunk`;

beforeAll(() => createLineTotals(env.db.pool));

const temporal = () => ({ client: env.client as Client, pool: env.db.pool, taskQueue: env.worker.taskQueue });

async function runWrong(mode: 'upsert' | 'update' | 'replace', extra: Partial<SpecInput> = {}) {
  const spec = lineTotalsSpec(env.db.envVar, mode, { name: `wrong-${mode}`, transform: { name: 'line-totals', version: 1, sql: WRONG }, ...extra });
  const started = await env.start(spec);
  const result = await waitForResult(started.handle);
  expect(result.status).toBe('succeeded');
  return (await getRun(env.db.pool, started.runId))!;
}

async function revert(runId: string, options: { partitions?: string[] } = {}) {
  const original = (await getRun(env.db.pool, runId))!;
  const started = await revertRun(temporal(), original, { reason: 'the transform doubled every total', actor: 'test', ...options });
  return { started, result: await waitForResult(started.handle) };
}

async function partitionStatuses(runId: string): Promise<Record<string, number>> {
  const { rows } = await env.db.pool.query<{ status: string; n: string }>(
    'SELECT status, count(*) AS n FROM backfill.partitions WHERE run_id = $1 GROUP BY 1 ORDER BY 1',
    [runId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

describe.each(['upsert', 'update', 'replace'] as const)('%s mode', (mode) => {
  test('a wrong run, then revert: the target is its snapshot from before the run, row for row', async () => {
    await seedLineTotals(env.db.pool);
    const before = await snapshotLineTotals(env.db.pool, 'before');
    const wrong = await runWrong(mode);
    const changed = await imagedRows(env.db.pool, wrong.run_id);
    // the wrong transform rewrites every line (and replace mode deletes the strays)
    expect(changed).toBe(mode === 'update' ? (2 * ORDERS * LINES) / 3 : ORDERS * LINES + (mode === 'replace' ? CHANGES.replace.d : 0));
    expect((await differences(env.db.pool, TARGET, before)).onlyA).toBeGreaterThan(0);

    const { started, result } = await revert(wrong.run_id);
    expect(result.status).toBe('succeeded');
    expect(await differences(env.db.pool, TARGET, before)).toEqual({ onlyA: 0, onlyB: 0 });
    expect({ read: result.rowsRead, written: result.rowsWritten }).toEqual({ read: changed, written: changed });

    // the ledger tells the story: every partition of the run reverted, naming the revert; the revert names the run
    expect(await partitionStatuses(wrong.run_id)).toEqual({ reverted: wrong.partitions_total });
    const { rows: by } = await env.db.pool.query('SELECT DISTINCT reverted_by FROM backfill.partitions WHERE run_id = $1', [wrong.run_id]);
    expect(by).toEqual([{ reverted_by: started.runId }]);
    const report = await statusReportFor(env.db.pool, started.runId);
    expect(report.revert).toEqual({ of: wrong.run_id, conflicts: { total: 0, examples: [] } });
    const original = await statusReportFor(env.db.pool, wrong.run_id);
    expect(original.revertedBy).toEqual({ runs: [{ runId: started.runId, status: 'succeeded' }], partitions: wrong.partitions_total });
    expect(renderStatus(original)).toContain(`  reverted:  ${wrong.partitions_total} partition(s), by ${started.runId} (succeeded)`);

    // nothing left to revert
    await expect(revert(wrong.run_id)).rejects.toThrow(`run ${wrong.run_id} has no partition left to revert: every partition it wrote was reverted already`);
  });
});

test('rows the application changed after the run are conflicts: left as the application left them, keys in the ledger; every other row restored', async () => {
  await seedLineTotals(env.db.pool);
  const before = await snapshotLineTotals(env.db.pool, 'before');
  const wrong = await runWrong('upsert');
  // the application, between run and revert: changes rows the run updated ((o + l) % 3 <> 2) and
  // rows it inserted (= 2), and deletes two rows it inserted — which leaves those as they were before the run
  await env.db.pool.query(`
    UPDATE ${TARGET} SET total = 1234.56 WHERE (order_id, line_no) IN ((10, 3), (20, 2), (31, 2), (40, 3));
    UPDATE ${TARGET} SET note = 'app' WHERE (order_id, line_no) IN ((10, 1), (20, 3), (30, 2));
    DELETE FROM ${TARGET} WHERE (order_id, line_no) IN ((40, 1), (50, 3));
  `);
  const touched = `(order_id, line_no) IN ((10, 3), (20, 2), (31, 2), (40, 3), (10, 1), (20, 3), (30, 2), (40, 1), (50, 3))`;
  const appState = await env.db.pool.query(`SELECT * FROM ${TARGET} WHERE ${touched} ORDER BY 1, 2`);

  const { started, result } = await revert(wrong.run_id);
  expect(result.status).toBe('succeeded');
  // the application's rows are exactly as it left them
  expect((await env.db.pool.query(`SELECT * FROM ${TARGET} WHERE ${touched} ORDER BY 1, 2`)).rows).toEqual(appState.rows);
  // every other row is as it was before the run
  await env.db.pool.query(`CREATE TEMP TABLE untouched_now AS SELECT * FROM ${TARGET} WHERE NOT ${touched}`);
  await env.db.pool.query(`CREATE TEMP TABLE untouched_before AS SELECT * FROM ${before} WHERE NOT ${touched}`);
  expect(await differences(env.db.pool, 'untouched_now', 'untouched_before')).toEqual({ onlyA: 0, onlyB: 0 });

  const report = await statusReportFor(env.db.pool, started.runId);
  expect(report.revert!.conflicts.total).toBe(7);
  const { rows: conflicts } = await env.db.pool.query('SELECT key, change FROM backfill.revert_conflicts WHERE run_id = $1 ORDER BY key', [started.runId]);
  expect(conflicts).toEqual([
    { key: '(10,1)', change: 'inserted' },
    { key: '(10,3)', change: 'updated' },
    { key: '(20,2)', change: 'updated' },
    { key: '(20,3)', change: 'inserted' },
    { key: '(30,2)', change: 'inserted' },
    { key: '(31,2)', change: 'updated' },
    { key: '(40,3)', change: 'updated' },
  ]);
  expect(renderStatus(report)).toMatch(/ {2}conflicts: 7 row\(s\) changed after \S+ wrote them, left as they are: /);
  // the counts add up: restored + already as before (the two deleted) + conflicts = every image
  const { rows: totals } = await env.db.pool.query(
    'SELECT sum(rows_read)::int AS read, sum(rows_written)::int AS written, sum(rows_unchanged)::int AS unchanged, sum(rows_skipped)::int AS skipped FROM backfill.partitions WHERE run_id = $1',
    [started.runId],
  );
  expect(totals[0]).toEqual({ read: result.rowsRead, written: result.rowsRead - 9, unchanged: 2, skipped: 7 });
});

test('replace mode restores a partition whole or not at all: a conflict holds its partition, the others are restored', async () => {
  await seedLineTotals(env.db.pool);
  const before = await snapshotLineTotals(env.db.pool, 'before');
  const wrong = await runWrong('replace');
  // one row of the partition of orders 1000–1999 changed by the application
  await env.db.pool.query(`UPDATE ${TARGET} SET kept = 'app' WHERE order_id = 1500 AND line_no = 1`);
  const { started, result } = await revert(wrong.run_id);
  expect(result.status).toBe('failed');
  const { rows: partitions } = await env.db.pool.query<{ partition_id: string; status: string; last_error: string }>(
    'SELECT partition_id, status, last_error FROM backfill.partitions WHERE run_id = $1 ORDER BY ordinal',
    [started.runId],
  );
  const held = partitions.filter((p) => p.status === 'failed');
  expect(held.map((p) => p.partition_id)).toEqual(['order_id:000001000-000002000']);
  expect(held[0].last_error).toMatch(
    /^partition order_id:000001000-000002000: 1 of its \d+ row\(s\) were changed after run \S+ wrote them; replace mode restores a partition whole or not at all/,
  );
  // the held partition is as the run (and the application) left it; every other partition as before the run
  await env.db.pool.query(`CREATE TEMP TABLE others_now AS SELECT * FROM ${TARGET} WHERE order_id NOT BETWEEN 1000 AND 1999`);
  await env.db.pool.query(`CREATE TEMP TABLE others_before AS SELECT * FROM ${before} WHERE order_id NOT BETWEEN 1000 AND 1999`);
  expect(await differences(env.db.pool, 'others_now', 'others_before')).toEqual({ onlyA: 0, onlyB: 0 });
  const { rows: heldRows } = await env.db.pool.query(`SELECT count(*)::int AS n FROM ${TARGET} WHERE order_id BETWEEN 1000 AND 1999 AND note = lower(note)`);
  expect(heldRows[0].n).toBeGreaterThan(0);
  expect(await partitionStatuses(wrong.run_id)).toEqual({ reverted: wrong.partitions_total - 1, succeeded: 1 });
  await env.db.pool.query(`UPDATE ${TARGET} SET kept = 'kept 1500' WHERE order_id = 1500 AND line_no = 1`);
});

test('a revert pauses and resumes like any run, and ends exact', async () => {
  await seedLineTotals(env.db.pool);
  const before = await snapshotLineTotals(env.db.pool, 'before');
  // slow chunks: the revert inherits the run's limits
  const wrong = await runWrong('upsert', { name: 'wrong-paced', limits: { chunkSize: 100, concurrency: 1, rowsPerSecond: 2_000 } });
  const original = (await getRun(env.db.pool, wrong.run_id))!;
  const started = await revertRun(temporal(), original, { reason: 'paced revert', actor: 'test' });
  const revertRow = async () => (await getRun(env.db.pool, started.runId))!;
  const restored = async () =>
    Number((await env.db.pool.query('SELECT sum(rows_read) AS n FROM backfill.partitions WHERE run_id = $1', [started.runId])).rows[0].n ?? 0);
  while ((await restored()) < 500) await new Promise((r) => setTimeout(r, 100));
  await controlRun({ client: env.client, pool: env.db.pool }, await revertRow(), 'pause', { actor: 'test', reason: 'look first' });
  await new Promise((r) => setTimeout(r, 1500));
  const paused = await restored();
  await new Promise((r) => setTimeout(r, 1500));
  expect(await restored()).toBe(paused);
  expect((await revertRow()).status).toBe('paused');
  await controlRun({ client: env.client, pool: env.db.pool }, await revertRow(), 'resume', { actor: 'test', reason: 'go on' });
  expect((await waitForResult(started.handle)).status).toBe('succeeded');
  expect(await differences(env.db.pool, TARGET, before)).toEqual({ onlyA: 0, onlyB: 0 });
});

test('after-actions run again after the revert: a materialized view over the target shows the rows as they were', async () => {
  await seedLineTotals(env.db.pool);
  await env.db.pool.query(`DROP MATERIALIZED VIEW IF EXISTS "Shop".sums; CREATE MATERIALIZED VIEW "Shop".sums AS SELECT sum(total) AS total FROM ${TARGET}`);
  const sum = async (from: string) => (await env.db.pool.query(`SELECT (SELECT total FROM ${from})::text AS t`)).rows[0].t as string;
  const truth = await sum(`(SELECT sum(total) AS total FROM ${TARGET}) x`);
  const wrong = await runWrong('upsert', { name: 'wrong-after', after: [{ action: 'refresh', view: 'Shop.sums' }] });
  expect(await sum('"Shop".sums')).not.toBe(truth);
  const { result } = await revert(wrong.run_id);
  expect(result).toMatchObject({ status: 'succeeded', downstream: 'succeeded' });
  expect(await sum('"Shop".sums')).toBe(truth);
});

test('a run whose window has passed is refused, with the date it could be reverted until', async () => {
  await seedLineTotals(env.db.pool);
  const wrong = await runWrong('update', { name: 'wrong-late', undo: { keep: '2 days' } });
  // cleanup inside the window keeps the images, and says until when
  const early = await cleanupRun(env.db.pool, wrong.run_id, 'test');
  expect(early.removed.images).toBe(false);
  expect(early.imagesKept?.until).toBe(new Date(wrong.finished_at!.getTime() + 2 * 86_400_000).toISOString());
  await env.db.pool.query("UPDATE backfill.runs SET finished_at = finished_at - interval '3 days' WHERE run_id = $1", [wrong.run_id]);
  const { rows } = await env.db.pool.query("SELECT finished_at + interval '2 days' AS until FROM backfill.runs WHERE run_id = $1", [wrong.run_id]);
  await expect(revert(wrong.run_id)).rejects.toThrow(
    `run ${wrong.run_id} could be reverted until ${(rows[0].until as Date).toISOString()} (undo keep: 2 days after it finished); that window has passed`,
  );
  // past the window, cleanup drops them; status says so
  expect((await cleanupRun(env.db.pool, wrong.run_id, 'test')).removed.images).toBe(true);
  expect((await env.db.pool.query('SELECT to_regclass($1) AS t', [wrong.undo_table])).rows[0].t).toBeNull();
  expect(renderStatus(await statusReportFor(env.db.pool, wrong.run_id))).toMatch(/ {2}undo: {6}before-images of every row it changed \(dropped\), kept until /);
  // the workers' daily sweep does the same for every run whose window has passed
  const other = await runWrong('update', { name: 'wrong-swept', undo: { keep: '1 hour' } });
  await env.db.pool.query("UPDATE backfill.runs SET finished_at = finished_at - interval '2 hours' WHERE run_id = $1", [other.run_id]);
  expect(await sweepExpiredImages(env.db.pool)).toEqual([other.run_id]);
  expect((await env.db.pool.query('SELECT to_regclass($1) AS t', [other.undo_table])).rows[0].t).toBeNull();
  expect(servedDatabases(['BF_TEST_*', 'NOT_SET_HERE'], { BF_TEST_A: 'x', BF_TEST_B: 'y', OTHER: 'z' })).toEqual(['BF_TEST_A', 'BF_TEST_B']);
  // and a run that kept no images says so
  const off = await runWrong('update', { name: 'wrong-off', undo: 'off' });
  await expect(revert(off.run_id)).rejects.toThrow(
    `run ${off.run_id} kept no before-images (undo: off, or it ran before backfill kept them): it cannot be reverted`,
  );
});

test('stale shows reverted partitions as never written since, and start --only-stale re-runs exactly them', async () => {
  await seedLineTotals(env.db.pool);
  const spec = lineTotalsSpec(env.db.envVar, 'upsert', { name: 'wrong-stale', transform: { name: 'line-totals', version: 1, sql: WRONG } });
  const first = await env.start(spec);
  expect((await waitForResult(first.handle)).status).toBe('succeeded');
  const written = await snapshotLineTotals(env.db.pool, 'written');
  const original = (await getRun(env.db.pool, first.runId))!;
  expect(await stalePartitions(env.db.pool, 'wrong-stale', 1)).toEqual([]);

  const { started } = await revert(first.runId, { partitions: ['order_id:000001000-000002000', 'order_id:000002000-000003000'] });
  const stale = await stalePartitions(env.db.pool, 'wrong-stale', 1);
  expect(stale.map((p) => [p.partitionId, p.reason])).toEqual([
    ['order_id:000001000-000002000', `reverted by ${started.runId}; no run has written it since`],
    ['order_id:000002000-000003000', `reverted by ${started.runId}; no run has written it since`],
  ]);
  expect(await partitionStatuses(original.run_id)).toEqual({ reverted: 2, succeeded: original.partitions_total - 2 });

  const again = await env.start(spec, { onlyStale: true });
  expect(again.partitions).toBe(2);
  expect((await waitForResult(again.handle)).status).toBe('succeeded');
  expect(await differences(env.db.pool, TARGET, written)).toEqual({ onlyA: 0, onlyB: 0 });
  expect(await stalePartitions(env.db.pool, 'wrong-stale', 1)).toEqual([]);
});

test('backfill revert --wait, as an operator runs it: exit 1 with conflicts and where to see them, exit 0 when every row was restored, exit 2 when refused', async () => {
  await seedLineTotals(env.db.pool);
  const before = await snapshotLineTotals(env.db.pool, 'before');
  const wrong = await runWrong('update', { name: 'wrong-cli' });
  const cli = (args: string[]) => runCli(['revert', ...args, '--database', env.db.envVar], { BACKFILL_TASK_QUEUE: env.worker.taskQueue });

  expect(await cli([wrong.run_id])).toMatchObject({ code: 2, stderr: expect.stringContaining("required option '--reason <text>' not specified") });
  const unknown = await cli([wrong.run_id, '--partition', 'nope', '--reason', 'x']);
  expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining(`run ${wrong.run_id} has no partition nope`) });

  await env.db.pool.query(`UPDATE ${TARGET} SET note = 'app' WHERE order_id = 5 AND line_no = 1`);
  const first = await cli([wrong.run_id, '--partition', 'order_id:000000000-000001000', '--reason', 'first thousand orders', '--yes', '--wait']);
  expect(first.code).toBe(1);
  expect(first.stderr).toMatch(/1 row\(s\) were changed after \S+ wrote them and were left as they are \(conflicts\); their keys: backfill status \S+/);
  expect(first.stdout).toContain('  conflicts: 1 row(s) changed after');

  const rest = await cli([wrong.run_id, '--reason', 'the rest', '--yes', '--wait']);
  expect(rest.code).toBe(0);
  expect(rest.stdout).toMatch(/: SUCCEEDED/);
  // every row but the conflict is as before the run; the conflict is the run's write plus the application's
  expect(await differences(env.db.pool, TARGET, before)).toEqual({ onlyA: 1, onlyB: 1 });
  const { rows } = await env.db.pool.query(`SELECT note FROM ${TARGET} WHERE order_id = 5 AND line_no = 1`);
  expect(rows).toEqual([{ note: 'app' }]);
});

test('revert --dry-run counts what revert then does, writing nothing; without --yes and without a terminal, revert and cancel refuse and do nothing', async () => {
  await seedLineTotals(env.db.pool);
  const wrong = await runWrong('update', { name: 'wrong-dry' });
  const cli = (args: string[]) => runCli([...args, '--database', env.db.envVar], { BACKFILL_TASK_QUEUE: env.worker.taskQueue });
  // two rows the application changes after the run: the revert must leave them
  await env.db.pool.query(`UPDATE ${TARGET} SET note = 'app' WHERE (order_id, line_no) IN ((7, 2), (2500, 2))`);
  const now = await snapshotLineTotals(env.db.pool, 'dry');

  const dry = await cli(['revert', wrong.run_id, '--dry-run', '-o', 'json']);
  expect(dry.code).toBe(0);
  const preview = JSON.parse(dry.stdout);
  // update mode: the wrong transform changed every line the target holds, two thirds of them
  const changed = (2 * ORDERS * LINES) / 3;
  expect(preview.totals).toEqual({ images: changed, restore: changed - 2, asBefore: 0, conflicts: 2, held: 0 });
  expect(preview.partitions.reduce((n: number, p: { conflicts: number }) => n + p.conflicts, 0)).toBe(2);
  const text = await cli(['revert', wrong.run_id, '--dry-run']);
  expect(text.stdout).toContain(`put back ${changed - 2} of the ${changed} row(s) it changed`);
  expect(text.stdout).toContain('leave 2 row(s) changed by someone since');

  // no terminal, no --yes: refused before anything is done, and the refusal says how to confirm
  const unconfirmed = await cli(['revert', wrong.run_id, '--reason', 'wrong totals']);
  expect(unconfirmed).toMatchObject({ code: 2, stderr: expect.stringContaining('add --yes to confirm it in a script (nothing was done)') });
  // a revert that could not start is still refused for that, confirmed or not
  expect(await cli(['revert', wrong.run_id, '--partition', 'nope', '--reason', 'x'])).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('has no partition nope'),
  });
  expect(await differences(env.db.pool, TARGET, now)).toEqual({ onlyA: 0, onlyB: 0 });
  expect((await env.db.pool.query('SELECT count(*)::int AS n FROM backfill.runs WHERE reverts = $1', [wrong.run_id])).rows[0].n).toBe(0);

  const done = await cli(['revert', wrong.run_id, '--reason', 'wrong totals', '--yes', '--wait', '-o', 'json']);
  expect(done.code).toBe(1); // two conflicts
  const { rows } = await env.db.pool.query<{ run_id: string }>('SELECT run_id FROM backfill.runs WHERE reverts = $1', [wrong.run_id]);
  const status = await statusReportFor(env.db.pool, rows[0].run_id);
  // what the dry run said is what the revert did
  expect({ restored: status.totals.rowsWritten, left: status.totals.rowsSkipped, conflicts: status.revert?.conflicts.total }).toEqual({
    restored: preview.totals.restore,
    left: preview.totals.conflicts,
    conflicts: preview.totals.conflicts,
  });
});

test('cancel asks on a terminal (no: nothing done, exit 130; yes: cancelled); without a terminal and without --yes it refuses', async () => {
  const started = await env.start(
    lineTotalsSpec(env.db.envVar, 'update', { name: 'cancel-confirm', limits: { chunkSize: 100, concurrency: 1, rowsPerSecond: 500 } }),
  );
  const cli = (args: string[]) => runCli([...args, '--database', env.db.envVar], { BACKFILL_TASK_QUEUE: env.worker.taskQueue });
  const refused = await cli(['cancel', started.runId, '--reason', 'not sure']);
  expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('asks for confirmation') });
  expect((await getRun(env.db.pool, started.runId))!).toMatchObject({ cancel_requested: false });
  const onTerminal = (answer: string) =>
    runCliOnTerminal(['cancel', started.runId, '--reason', 'asked', '--database', env.db.envVar], answer, { BACKFILL_TASK_QUEUE: env.worker.taskQueue });
  const no = await onTerminal('n');
  expect(no.output).toContain(`Cancel cancel-confirm/${started.runId} (running)? Its partitions stop at their next chunk; what was written stays. [y/N]`);
  expect(no).toMatchObject({ code: 130, output: expect.stringContaining('not confirmed; nothing was done') });
  expect((await getRun(env.db.pool, started.runId))!).toMatchObject({ cancel_requested: false });
  const yes = await onTerminal('y');
  expect(yes).toMatchObject({ code: 0, output: expect.stringContaining(`Run cancel-confirm/${started.runId} cancelling.`) });
  expect((await waitForResult(started.handle)).status).toBe('cancelled');
});
