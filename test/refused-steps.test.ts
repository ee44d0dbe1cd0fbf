/**
 * A step the database refuses the same way every time ends at once, not after retries: the
 * run's own bookkeeping fails the run's workflow with the reason (shown Failed, instead of a
 * run that retries for ever while it reads as running; `cancel` then closes its ledger record),
 * and a partition's ledger step fails that partition, saying why. The classification of every
 * SQLSTATE class is table-tested in test/unit/refused-at-once.test.ts; this file proves the path
 * through real servers.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { waitForResult } from '../src/operations';
import { listEvents } from '../src/ledger/events';
import { migrateLedger } from '../src/ledger/migrate';
import { getRun } from '../src/ledger/runs';
import { partitionWorkflowId } from '../src/domain/ids';
import { runCli } from './helpers/cli';
import { localAttemptsOf } from './helpers/histories';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec } from './helpers/orders';

const env = useTestEnvironment('refused', { rows: 3000 });

beforeAll(async () => {
  // the ledger exists before the first run, so a test can give it a constraint of its own
  await migrateLedger(env.db.pool);
});

/** How many times the activity `name` started, across the history: retries show as attempts > 1. */
function attemptsOf(history: temporal.api.history.v1.IHistory, name: string): number[] {
  const scheduled = new Set(history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name).map((e) => String(e.eventId)));
  return history
    .events!.filter((e) => e.activityTaskStartedEventAttributes && scheduled.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)))
    .map((e) => e.activityTaskStartedEventAttributes!.attempt!);
}

test('a run whose bookkeeping the ledger refuses fails its workflow at once, naming the step and the error; `cancel` then closes its ledger record', async () => {
  const name = 'refused-finish';
  // a rule no retry can satisfy: this run may never finish (23514 when finalizeRun records the outcome)
  await env.db.pool.query(
    `ALTER TABLE backfill.runs ADD CONSTRAINT test_never_finishes CHECK (name <> '${name}' OR status NOT IN ('succeeded', 'failed', 'cancelled')) NOT VALID`,
  );
  let runId = '';
  try {
    const started = await env.start(ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 3000 } }));
    runId = started.runId;
    const failure = await started.handle.result().then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    // the workflow's failure is the activity's, whose cause is the refusal
    const activity = (failure as WorkflowFailedError).cause;
    const message = String((activity?.cause as Error | undefined)?.message ?? activity?.message);
    expect(message).toContain('finalizeRun was refused by the database');
    expect(message).toContain('SQLSTATE 23514');
    expect(message).toContain('test_never_finishes');
    expect(message).toContain('backfill migrate');
    expect((await started.handle.describe()).status.name).toBe('FAILED');
    expect(attemptsOf(await started.handle.fetchHistory(), 'finalizeRun')).toEqual([1]);
  } finally {
    await env.db.pool.query('ALTER TABLE backfill.runs DROP CONSTRAINT test_never_finishes');
  }

  // the ledger still shows the run running, which holds its name and target: no signal reaches
  // the ended workflow, so pause says what to do, and cancel closes the record in its stead
  const db = ['--database', env.db.envVar];
  const status = await runCli(['status', runId, ...db]);
  expect(status.stdout).toContain(`RUNNING`);
  expect(status.stdout).toContain('workflow:  ended FAILED without finishing the run (finalizeRun was refused by the database');
  expect(status.stdout).toContain(`close the ledger's record with: backfill cancel ${runId}`);
  const pause = await runCli(['pause', runId, ...db]);
  expect(pause.code).toBe(2);
  expect(pause.stderr).toContain('workflow ended FAILED without finishing the run (finalizeRun was refused by the database');
  expect(pause.stderr).toContain(`backfill cancel ${runId}`);
  const cancel = await runCli(['cancel', runId, '--reason', 'the ledger was broken by hand', '--actor', 'test', '--yes', ...db]);
  expect(cancel.stderr).toBe('');
  expect(cancel.code).toBe(0);
  expect(cancel.stdout).toContain('closed: its workflow had ended FAILED');
  const run = await getRun(env.db.pool, runId);
  expect(run).toMatchObject({ status: 'failed', cancel_requested: true });
  expect(run!.last_error).toContain("the run's workflow ended FAILED before finishing the run: finalizeRun was refused by the database");
  expect(run!.last_error).toContain('closed by test with backfill cancel');
  const events = await listEvents(env.db.pool, runId);
  expect(events.find((e) => e.kind === 'closed')).toMatchObject({ actor: 'test', reason: 'the ledger was broken by hand' });
  // closed, the run is not active: status does not ask Temporal again
  const closed = JSON.parse((await runCli(['status', runId, ...db, '-o', 'json'])).stdout) as { status: string; workflowEnded?: unknown };
  expect(closed).toMatchObject({ status: 'failed' });
  expect(closed.workflowEnded).toBeUndefined();
  const again = await runCli(['cancel', runId, '--reason', 'twice', '--yes', ...db]);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain('already finished (failed)');
});

test('a partition whose ledger step is refused fails at once with the reason; the other partitions complete and the run ends failed', async () => {
  const name = 'refused-partition';
  const victim = 'id:000002000-000004000';
  // partitions of this run's size are unique to this test: this one can never start
  await env.db.pool.query(
    `ALTER TABLE backfill.partitions ADD CONSTRAINT test_never_starts CHECK (partition_id <> '${victim}' OR status <> 'running') NOT VALID`,
  );
  try {
    const started = await env.start(ordersSpec(env.db.envVar, { name, partition: { by: 'range', column: 'id', size: 2000 } }));
    const result = await waitForResult(started.handle);
    expect(result.status).toBe('failed');
    expect(result.partitions.failed).toBe(1);
    expect(result.partitions.succeeded).toBe(result.partitions.total - 1);
    const { rows } = await env.db.pool.query<{ last_error: string }>('SELECT last_error FROM backfill.partitions WHERE run_id = $1 AND partition_id = $2', [
      started.runId,
      victim,
    ]);
    expect(rows[0].last_error).toContain('processPartition was refused by the database');
    expect(rows[0].last_error).toContain('SQLSTATE 23514');
    const child = env.client.workflow.getHandle(partitionWorkflowId(name, started.runId, victim));
    // one try, not retried: its first attempt runs as a local activity, and a refusal ends it there
    const tries = await child.fetchHistory();
    expect([...localAttemptsOf(tries, 'processPartition'), ...attemptsOf(tries, 'processPartition')]).toEqual([1]);

    // `backfill partitions` lists the failure first, with its reason; --status narrows the list
    const db = ['--database', env.db.envVar];
    const listed = JSON.parse((await runCli(['partitions', started.runId, ...db, '-o', 'json'])).stdout) as {
      partitionId: string;
      status: string;
      error: string | null;
    }[];
    expect(listed).toHaveLength(result.partitions.total);
    expect(listed[0]).toMatchObject({ partitionId: victim, status: 'failed', error: expect.stringContaining('SQLSTATE 23514') });
    expect(listed.slice(1).every((p) => p.status === 'succeeded')).toBe(true);
    const failedOnly = await runCli(['partitions', started.runId, ...db, '--status', 'failed']);
    expect(failedOnly.code).toBe(0);
    expect(failedOnly.stdout).toContain(victim);
    expect(failedOnly.stdout).toContain(`${victim} failed: processPartition was refused by the database`);
    expect(failedOnly.stdout).not.toContain('succeeded');
    const wrong = await runCli(['partitions', started.runId, ...db, '--status', 'broken']);
    expect({ code: wrong.code, stderr: wrong.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('--status takes pending, running, succeeded, failed, cancelled'),
    });
  } finally {
    await env.db.pool.query('ALTER TABLE backfill.partitions DROP CONSTRAINT test_never_starts');
  }
});
