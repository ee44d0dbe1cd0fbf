/**
 * The run workflow's wiring, on a real Temporal dev server, against the model ledger: the
 * sliding window and paging, continue-as-new with children in flight, the canary and ramp
 * gates and their holds, pause and cancel, reconciliation timers, a final check that cannot
 * complete. Seconds per case; what the activities do to PostgreSQL is tested in test/*.test.ts.
 */
import {
  Client,
  Connection,
  WorkflowFailedError,
  WorkflowUpdateStage,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { cancelUpdate, pauseUpdate, resumeUpdate, setLimitsUpdate } from '../../src/workflows/messages';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { specSchema, type SpecInput } from '../../src/specs/schema';
import { QUIET_BUNDLER_LOGGER } from '../../src/temporal/prebuilt-bundle';
import type { BackfillRunInput, RunResult, RunWorkflowInput } from '../../src/workflows/backfill-run';
import { waitForResult } from '../../src/operations/run-workflow';
import { ordersSpec } from '../helpers/orders';
import { partitionGroupWorkflowId, partitionWorkflowId, runWorkflowId } from '../../src/domain/ids';
import { uniqueName } from '../helpers/unique';
import { localAttemptsOf, partitionStarts } from '../helpers/histories';
import { ModelLedger, partitionId, type ModelOptions } from './model-ledger';
import { executeUpdate } from '../../src/temporal/update-across-continue-as-new';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../src/domain/failures';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

const address = () => process.env.BACKFILL_WORKFLOW_TEMPORAL_ADDRESS!;
let client: Client;
let connection: Connection;
let native: NativeConnection;
let bundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  connection = await Connection.connect({ address: address() });
  client = new Client({ connection });
  native = await NativeConnection.connect({ address: address() });
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    logger: QUIET_BUNDLER_LOGGER,
  });
});

afterAll(async () => {
  await connection?.close();
  await native?.close();
});

interface Run {
  model: ModelLedger;
  handle: WorkflowHandleWithFirstExecutionRunId;
  result: () => Promise<RunResult>;
}

/** Starts a run of `partitions` on its own task queue and worker; the worker stops when the test ends. */
async function withRun(
  options: ModelOptions,
  spec: Partial<SpecInput>,
  extra: Partial<BackfillRunInput>,
  body: (run: Run) => Promise<void>,
): Promise<ModelLedger> {
  const model = new ModelLedger(options);
  const taskQueue = uniqueName('wf', '-');
  const runId = uniqueName('run', '-');
  const input: RunWorkflowInput = {
    kind: 'run',
    runId,
    spec: specSchema.parse(ordersSpec('BF_MODEL', { name: 'model', ...spec })),
    specHash: 'model',
    transform: { name: 'model', version: 1, kind: 'sql', codeHash: 'model' },
    startedBy: 'workflow-tier',
    ...extra,
  };
  // a run routed to its database's queue: the model answers there (as a worker connected to that
  // database would), and the common queue's worker records whatever reaches it
  const queues = input.databaseQueue ? [taskQueue, input.databaseQueue] : [taskQueue];
  const workers = await Promise.all(
    queues.map((queue) =>
      Worker.create({
        connection: native,
        taskQueue: queue,
        workflowBundle: bundle,
        activities: queue === taskQueue && input.databaseQueue ? model.activities('common queue') : model.activities(),
        ...(options.localSlots ? { maxConcurrentLocalActivityExecutions: options.localSlots } : {}),
      }),
    ),
  );
  const run = async () => {
    const handle = await client.workflow.start('backfillRunWorkflow', { taskQueue, workflowId: `model/${runId}`, args: [input] });
    await body({ model, handle, result: () => waitForResult(handle) });
  };
  await workers.reduceRight<() => Promise<void>>((inner, worker) => () => worker.runUntil(inner), run)();
  return model;
}

/** Waits for the model to reach a state (never a fixed time). */
async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('every partition runs once, never more than `concurrency` at a time, paged past the first page and across continue-as-new', async () => {
  await withRun(
    { partitions: 130, processMs: 10 },
    { limits: { concurrency: 4, chunkSize: 1000 } },
    // each partition adds at least two events to the run (its start's marker and its report),
    // however many reports a workflow task takes in: 130 partitions pass 200 events on any machine
    { maxHistoryEvents: 200 },
    async ({ model, handle, result }) => {
      const r = await result();
      expect(r).toMatchObject({ status: 'succeeded', partitions: { total: 130, succeeded: 130, failed: 0, cancelled: 0 }, rowsWritten: 1300 });
      expect(model.partitions.every((p) => p.processed === 1 && p.status === 'succeeded')).toBe(true);
      expect(model.maxInFlight).toBeLessThanOrEqual(4);
      expect(model.maxInFlight).toBeGreaterThan(1);
      // the plan is read a page at a time: 130 partitions never come from one read
      expect(model.calls.filter((c) => c.startsWith('nextPartitions:')).length).toBeGreaterThanOrEqual(1);
      // continued as new: the execution that finished is not the first
      const { runId } = await client.workflow.getHandle(handle.workflowId).describe();
      expect(runId).not.toBe(handle.firstExecutionRunId);
      // in plan order, give or take the window: children launched together start in any order
      const order = model.processedOrder();
      expect([...order].sort((a, b) => a - b)).toEqual([...Array(130).keys()]);
      order.forEach((ordinal, i) => expect(Math.abs(ordinal - i)).toBeLessThan(2 * 4));
    },
  );
});

test('limits changed again and again while the run continues as new: every change answers, and the run finishes', async () => {
  await withRun(
    { partitions: 130, processMs: 10 },
    { limits: { concurrency: 4, chunkSize: 1000 } },
    { maxHistoryEvents: 60 },
    async ({ model, handle, result }) => {
      // an update waits for its change to reach the ledger; a run that waited for its handlers
      // before that sync, about to continue as new, waited for ever
      let done = false;
      const finished = result().finally(() => (done = true));
      let answered = 0;
      for (let i = 0; !done && i < 400; i++) {
        const change = { concurrency: 3 + (i % 2), actor: 'test', reason: `turn ${i}` };
        // sent as `backfill set-limits` sends it: again when a continue-as-new aborted it before the workflow saw it
        const update = executeUpdate(handle, setLimitsUpdate, change).then(
          () => answered++,
          (err: Error) => {
            // refused once the run is finishing or finished, or sent after it closed; never accepted and left unanswered
            const said = `${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`;
            if (!/its limits can no longer change|execution already completed/.test(said)) throw err;
          },
        );
        await Promise.race([
          update,
          new Promise((r) => setTimeout(r, 15_000)).then(() => Promise.reject(new Error(`the update of turn ${i} did not answer within 15 s`))),
        ]);
      }
      const r = await finished;
      expect(r).toMatchObject({ status: 'succeeded', partitions: { total: 130, succeeded: 130 } });
      expect(answered).toBeGreaterThan(5);
      const { runId } = await client.workflow.getHandle(handle.workflowId).describe();
      expect(runId).not.toBe(handle.firstExecutionRunId);
      expect(model.partitions.every((p) => p.processed === 1)).toBe(true);
    },
  );
});

test("a ledger step lost with its worker is taken up again within the run's heartbeat timeout, not its start-to-close bound", async () => {
  // a worker SIGKILLed under the sync of a limits change held a run for the step's ten minutes
  const lostOnce = ['syncRunControl', 'finalizeRun'] as const;
  await withRun(
    { partitions: 12, processMs: 20, lostOnce: [...lostOnce] },
    { limits: { concurrency: 2, chunkSize: 1000 } },
    {},
    async ({ model, handle, result }) => {
      await until('a partition ran', () => model.count('succeeded') >= 1);
      const limits = await executeUpdate(handle, setLimitsUpdate, { concurrency: 3, actor: 'test', reason: 'more' });
      expect(limits).toMatchObject({ concurrency: 3 });
      const r = await result();
      expect(r).toMatchObject({ status: 'succeeded', partitions: { succeeded: 12 } });
      expect(model.events.map((e) => e.kind)).toEqual(['limits-changed']);
      for (const name of lostOnce) {
        const { at, retriedAt } = model.lost[name] ?? { at: 0 };
        expect({ name, retried: retriedAt !== undefined }).toEqual({ name, retried: true });
        // 30 s of silence, the retry's first second, a workflow task or two
        expect(retriedAt! - at).toBeLessThan(45_000);
      }
    },
  );
});

test('small partitions of a run of many start in groups: each runs once, the window holds, a group reports its members together', async () => {
  await withRun({ partitions: 60, processMs: 5, rowsPlanned: 600 }, { limits: { concurrency: 6, chunkSize: 1000 } }, {}, async ({ model, handle, result }) => {
    const r = await result();
    expect(r).toMatchObject({ status: 'succeeded', partitions: { total: 60, succeeded: 60, failed: 0 }, rowsWritten: 600 });
    expect(model.partitions.every((p) => p.processed === 1 && p.status === 'succeeded')).toBe(true);
    expect(model.maxInFlight).toBeLessThanOrEqual(6);
    // far fewer workflows started than partitions, and reports in far fewer signals
    const history = await client.workflow.getHandle(handle.workflowId).fetchHistory();
    const starts = localAttemptsOf(history, 'startPartitionWorkflow').length;
    const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes);
    expect(starts).toBeLessThanOrEqual(30);
    expect(signals.length).toBeLessThanOrEqual(30);
    expect(signals.some((e) => e.workflowExecutionSignaledEventAttributes!.signalName === 'partitionsFinished')).toBe(true);
  });
});

test.each([
  ['from its own workflow task, and closes there', false],
  ['as a command when the signal from its task fails, and closes once it is delivered', true],
])('a group of finished partitions reports to the run %s', async (_how, groupReportFails) => {
  await withRun(
    { partitions: 50, processMs: 5, rowsPlanned: 500, groupReportFails },
    { limits: { concurrency: 5, chunkSize: 1000 } },
    {},
    async ({ model, handle, result }) => {
      expect(await result()).toMatchObject({ status: 'succeeded', partitions: { total: 50, succeeded: 50 }, rowsWritten: 500 });
      expect(model.partitions.every((p) => p.processed === 1)).toBe(true);
      const groups: string[] = [];
      for await (const w of client.workflow.list({
        query: `WorkflowId STARTS_WITH "${runWorkflowId('model', handle.workflowId.slice('model/'.length))}/group/"`,
      }))
        groups.push(w.workflowId);
      expect(groups.length).toBeGreaterThan(0);
      for (const id of groups) {
        const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
        const counted = (type: temporal.api.enums.v1.EventType) => events.filter((e) => e.eventType === type).length;
        expect(localAttemptsOf({ events }, 'reportPartitions')).toEqual([1]);
        expect(counted(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED)).toBe(groupReportFails ? 1 : 0);
        expect(counted(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).toBe(groupReportFails ? 2 : 1);
      }
    },
  );
});

test("a group's members wait for the worker's local slots rather than go on to their activities", async () => {
  // groups of six on a worker with two local slots: four members of each wait for a slot, three turns of 100 ms
  await withRun(
    { partitions: 48, processMs: 100, rowsPlanned: 480, localSlots: 2 },
    { limits: { concurrency: 6, chunkSize: 1000 } },
    {},
    async ({ model, result }) => {
      expect(await result()).toMatchObject({ status: 'succeeded', partitions: { total: 48, succeeded: 48 } });
      expect(model.partitions.every((p) => p.processed === 1)).toBe(true);
      expect(model.activityAttempts).toBe(0);
    },
  );
});

test('a group workflow terminated by hand is found by reconciliation through the group: its finished members count, the stuck one is recorded failed', async () => {
  await withRun(
    { partitions: 48, processMs: 5, rowsPlanned: 480, stuck: ['p0000'] },
    { limits: { concurrency: 4, chunkSize: 1000 } },
    { reconcileIntervalMs: 1000 },
    async ({ model, handle, result }) => {
      // p0000 never finishes its local attempt (a real one hands over within its budget): its group, the run's first, waits
      const members = ['p0000', 'p0001', 'p0002', 'p0003'];
      const group = partitionGroupWorkflowId('model', handle.workflowId.slice('model/'.length), members);
      await until('the rest of the group finished', () => members.slice(1).every((id) => model.partitions.find((p) => p.id === id)!.status === 'succeeded'));
      model.workflowClosed = async (id) => members.includes(id) && (await client.workflow.getHandle(group).describe()).status.name !== 'RUNNING';
      await client.workflow.getHandle(group).terminate('stuck worker');
      const r = await result();
      expect(r).toMatchObject({ status: 'failed', partitions: { succeeded: 47, failed: 1 } });
      for (const id of members) expect(model.calls).toContain(`reconcileAsked:${id}:${group}`);
      expect(model.partitions.find((p) => p.id === 'p0000')!.status).toBe('failed');
    },
  );
});

test('the canary runs alone first; a failed canary holds the run, nothing else is written, and cancel ends it', async () => {
  const model = await withRun({ partitions: 12, processMs: 10 }, { validate: { canary: { partitions: 3 } } }, {}, async ({ model, handle, result }) => {
    model.verdicts.canary = { passed: false, failures: ['amount_usd: 2 rows differ'], failureCount: 2, partitionsChecked: 3 };
    await until('the canary held the run', () => model.events.some((e) => e.kind === 'canary-failed'));
    expect(model.paused).toBe(true);
    expect(model.processedOrder().sort((a, b) => a - b)).toEqual([0, 6, 11]);
    await handle.signal('cancel', { actor: 'test', reason: 'the transform is wrong' });
    const r = await result();
    expect(r.status).toBe('cancelled');
  });
  expect(model.processedOrder().sort((a, b) => a - b)).toEqual([0, 6, 11]);
  expect(model.calls.indexOf('checkCanary')).toBeGreaterThan(model.calls.lastIndexOf('processPartition:p0011'));
  expect(model.calls).not.toContain('checkFinal');
});

test('a passing canary expands to the rest of the plan; its partitions are not run twice and are counted once', async () => {
  await withRun({ partitions: 12, processMs: 10 }, { validate: { canary: { partitions: 3 } } }, {}, async ({ model, result }) => {
    const r = await result();
    expect(r).toMatchObject({ status: 'succeeded', partitions: { total: 12, succeeded: 12 } });
    expect(model.partitions.every((p) => p.processed === 1)).toBe(true);
    const order = model.processedOrder();
    expect(order.slice(0, 3).sort((a, b) => a - b)).toEqual([0, 6, 11]);
    const progress = await client.workflow.getHandle(`model/${r.runId}`).query('progress');
    expect(progress).toMatchObject({ partitions: { total: 12, succeeded: 12 } });
  });
});

test('ramp stages: nothing beyond a stage starts before its check passed; a failed stage holds until approved', async () => {
  await withRun(
    { partitions: 20, processMs: 10 },
    { limits: { concurrency: 3, chunkSize: 1000 }, validate: { ramp: ['10%', '50%'] } },
    {},
    async ({ model, handle, result }) => {
      model.verdicts.stages = { 2: { passed: false, failures: ['an invariant'], failureCount: 1, partitionsChecked: 8 } };
      await until('stage 2 held the run', () => model.events.some((e) => e.kind === 'stage-failed'));
      const calls = model.calls;
      expect(calls).toContain('checkStage:1:0-2');
      expect(calls).toContain('checkStage:2:2-10');
      // nothing at or beyond a stage's cutoff started before that stage's check
      const started = (o: number) => calls.indexOf(`processPartition:${partitionId(o)}`);
      expect(started(2)).toBeGreaterThan(calls.indexOf('checkStage:1:0-2'));
      expect(Math.max(...model.processedOrder())).toBe(9);
      expect(model.paused).toBe(true);
      await handle.executeUpdate('approve', { args: [{ actor: 'test', reason: 'known difference' }] });
      const r = await result();
      expect(r).toMatchObject({ status: 'succeeded', partitions: { succeeded: 20 } });
      expect(started(10)).toBeGreaterThan(calls.indexOf('checkStage:2:2-10'));
    },
  );
});

test('pause stops launches and holds running partitions; resume carries on; a late setLimits returns once the ledger holds it', async () => {
  await withRun({ partitions: 30, processMs: 30 }, { limits: { concurrency: 2, chunkSize: 1000 } }, {}, async ({ model, handle, result }) => {
    await until('two partitions ran', () => model.count('succeeded') >= 2);
    await handle.signal('pause', { actor: 'test', reason: 'load' });
    await until('the ledger holds the pause', () => model.paused);
    // a partition the workflow launched just before the pause reached it may still begin, and
    // waits at its first chunk: none does any work while the run is paused
    const worked = model.worked;
    await new Promise((r) => setTimeout(r, 500));
    expect(model.worked).toBe(worked);
    expect(model.inFlightNow).toBeLessThanOrEqual(2);
    const limits = await handle.executeUpdate('setLimits', { args: [{ concurrency: 5, actor: 'test', reason: 'more' }] });
    expect(limits).toMatchObject({ concurrency: 5 });
    expect(model.version).toBeGreaterThanOrEqual(2);
    await handle.signal('resume', { actor: 'test', reason: 'quiet now' });
    const r = await result();
    expect(r).toMatchObject({ status: 'succeeded', partitions: { succeeded: 30 } });
    expect(model.maxInFlight).toBeLessThanOrEqual(5);
    expect(model.events.map((e) => e.kind)).toEqual(['paused', 'limits-changed', 'resumed']);
  });
});

test('a Temporal cancellation is an orderly cancel: partitions stop at a boundary and the workflow ends cancelled', async () => {
  await withRun({ partitions: 40, processMs: 50 }, { limits: { concurrency: 2, chunkSize: 1000 } }, {}, async ({ model, handle, result }) => {
    await until('a partition ran', () => model.count('succeeded') >= 1);
    await handle.cancel();
    // the execution ends Canceled; its result is in the memo
    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await result()).toMatchObject({ status: 'cancelled' });
    expect(model.cancelRequested).toBe(true);
    expect(model.calls).toContain('finalizeRun');
    expect(model.count('succeeded')).toBeLessThan(40);
    expect(model.count('running')).toBe(0);
  });
});

test('operator updates: refused with the reason when they do not apply; a cancel update then Temporal cancel ends Canceled with one event, by the operator', async () => {
  await withRun({ partitions: 40, processMs: 50 }, { limits: { concurrency: 2, chunkSize: 1000 } }, {}, async ({ model, handle, result }) => {
    await until('a partition ran', () => model.count('succeeded') >= 1);
    await expect(handle.executeUpdate(resumeUpdate, { args: [{ actor: 'ann' }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/is not paused; there is nothing to resume$/) },
    });
    expect(await handle.executeUpdate(pauseUpdate, { args: [{ actor: 'ann', reason: 'lag' }] })).toEqual({
      status: 'paused',
      paused: true,
      cancelRequested: false,
    });
    // the ledger holds the pause when the update answers
    expect(model.paused).toBe(true);
    await expect(handle.executeUpdate(pauseUpdate, { args: [{ actor: 'bob' }] })).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/is already paused by ann \(lag\); resume it with: backfill resume /) },
    });
    const cancel = await handle.startUpdate(cancelUpdate, {
      args: [{ actor: 'cid', reason: 'wrong rates', thenTemporalCancel: true }],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    await handle.cancel();
    expect(await cancel.result()).toMatchObject({ cancelRequested: true });
    expect(await result()).toMatchObject({ status: 'cancelled' });
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(model.events.filter((e) => e.kind === 'cancel-requested').map((e) => [e.actor, e.reason])).toEqual([['cid', 'wrong rates']]);
  });
});

/** Three partitions, the second stuck until its workflow is terminated by hand; reconciliation every 300 ms. */
async function withStuckPartition(body: (run: Run & { stuck: string; child: WorkflowHandle }) => Promise<void>): Promise<ModelLedger> {
  const stuck = partitionId(1);
  return withRun({ partitions: 3, processMs: 10, stuck: [stuck] }, { limits: { concurrency: 3, chunkSize: 1000 } }, { reconcileIntervalMs: 300 }, (run) =>
    body({ ...run, stuck, child: client.workflow.getHandle(partitionWorkflowId('model', run.handle.workflowId.slice('model/'.length), stuck)) }),
  );
}

test('a partition workflow terminated by hand is found by reconciliation and recorded failed; the run then shows Failed', async () => {
  await withStuckPartition(async ({ model, handle, result, stuck, child }) => {
    model.workflowClosed = async (id) => id === stuck && (await child.describe()).status.name !== 'RUNNING';
    await until('the other partitions finished', () => model.count('succeeded') === 2);
    await child.terminate('stuck worker');
    const r = await result();
    expect(r).toMatchObject({ status: 'failed', partitions: { succeeded: 2, failed: 1 } });
    expect(model.calls).toContain(`reconciled:${stuck}`);
    // a failed run fails its execution: Failed in the Web UI and in a list query, the result in the failure
    expect((await handle.describe()).status.name).toBe('FAILED');
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err as WorkflowFailedError,
    );
    expect(failure?.cause?.message).toMatch(/^backfill model\/\S+ failed: 1 of 3 partitions failed; see backfill status \S+, then backfill retry-failed/);
    // visibility catches up with the close a moment later
    const failedIds = async () => {
      const ids: string[] = [];
      for await (const w of client.workflow.list({ query: `WorkflowId = '${handle.workflowId}' AND ExecutionStatus = 'Failed'` })) ids.push(w.workflowId);
      return ids;
    };
    let listed = await failedIds();
    for (let i = 0; i < 50 && listed.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      listed = await failedIds();
    }
    expect(listed).toEqual([handle.workflowId]);
  });
});

test('the whole-run check runs one lane per concurrency slot (never more than partitions), then checkFinal adds up their tallies', async () => {
  const lanes = (m: ModelLedger) => m.calls.filter((c) => c.startsWith('checkFinalLane:')).sort();
  const wide = await withRun({ partitions: 6, processMs: 5 }, { limits: { concurrency: 3 } }, {}, async ({ result }) => {
    expect((await result()).status).toBe('succeeded');
  });
  expect(lanes(wide)).toEqual(['checkFinalLane:0/3', 'checkFinalLane:1/3', 'checkFinalLane:2/3']);
  // the sums come after every lane, before the ledger's verdict
  expect(wide.calls.indexOf('checkFinal')).toBeGreaterThan(Math.max(...lanes(wide).map((c) => wide.calls.indexOf(c))));
  expect(wide.calls.indexOf('checkFinal')).toBeLessThan(wide.calls.findIndex((c) => c.startsWith('finalizeRun')));
  const few = await withRun({ partitions: 2, processMs: 5 }, { limits: { concurrency: 6 } }, {}, async ({ result }) => {
    expect((await result()).status).toBe('succeeded');
  });
  expect(lanes(few)).toEqual(['checkFinalLane:0/2', 'checkFinalLane:1/2']);
});

test('a final check that cannot complete fails the run, saying why', async () => {
  await withRun({ partitions: 4, processMs: 10 }, {}, {}, async ({ model, result }) => {
    model.verdicts.final = new Error('could not determine which collation to use');
    const r = await result();
    expect(r.status).toBe('failed');
    expect(model.calls.find((c) => c.startsWith('finalizeRun:'))).toMatch(/the final check could not complete: could not determine which collation/);
    expect(model.calls).not.toContain('cleanupRun');
  });
});

test('a final check whose attempts all landed on workers of another database is asked again, not judged failed', async () => {
  await withRun({ partitions: 3, processMs: 10 }, {}, {}, async ({ model, result }) => {
    model.misroutedChecks = 2;
    const r = await result();
    expect(r.status).toBe('succeeded');
    expect(model.calls.filter((c) => c === 'checkFinal')).toHaveLength(3);
    expect(model.calls).toContain('finalizeRun');
  });
});

test("a run routed to its database's queue sends every activity and every partition there; the common queue runs only the run workflow", async () => {
  const databaseQueue = uniqueName('wf-db', '-');
  const model = await withRun(
    { partitions: 5, processMs: 5 },
    { validate: { canary: { partitions: 1 } }, limits: { concurrency: 2 } },
    { databaseQueue },
    async ({ handle, result }) => {
      expect((await result()).status).toBe('succeeded');
      const history = await handle.fetchHistory();
      const scheduled = (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
      expect(scheduled.length).toBeGreaterThan(3);
      expect(new Set(scheduled.map((a) => a.taskQueue?.name))).toEqual(new Set([databaseQueue]));
      // partitions are workflows of their own, started by the run's local activity: one marker
      // each in the run's history, no child event, and each partition's workflow on the database's queue
      expect((history.events ?? []).filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
      // the worker polls the database's queue too: each partition's first workflow task came back in its start's reply
      expect(partitionStarts(history)).toEqual(Array(5).fill({ partitionRunId: expect.any(String), eagerlyStarted: true }));
      const runId = handle.workflowId.slice('model/'.length);
      const partitions = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => client.workflow.getHandle(partitionWorkflowId('model', runId, partitionId(i))).describe()),
      );
      expect(partitions.map((p) => p.taskQueue)).toEqual(Array(5).fill(databaseQueue));
      expect(partitions.map((p) => p.status.name)).toEqual(Array(5).fill('COMPLETED'));
      expect(partitions.every((p) => p.parentExecution === undefined)).toBe(true);
    },
  );
  expect(model.calls.filter((c) => c.startsWith('common queue:'))).toEqual([]);
  expect(model.calls.filter((c) => c.startsWith('processPartition:'))).toHaveLength(5);
});

test('a reconciliation the database refuses for good is tried again next interval: no workflow task fails, and the run finishes', async () => {
  await withStuckPartition(async ({ model, handle, result, stuck, child }) => {
    let refusals = 0;
    model.workflowClosed = async (id) => {
      // before, a refusal here was an unhandled rejection: every workflow task of the run failed, forever
      if (refusals < 2) {
        refusals++;
        throw ApplicationFailure.nonRetryable('relation "app.orders" does not exist', FailureType.SpecInvalid);
      }
      return id === stuck && (await child.describe()).status.name !== 'RUNNING';
    };
    await until('the other partitions finished', () => model.count('succeeded') === 2);
    await child.terminate('stuck worker');
    const r = await result();
    expect(r).toMatchObject({ status: 'failed', partitions: { succeeded: 2, failed: 1 } });
    expect(refusals).toBe(2);
    const history = await client.workflow.getHandle(handle.workflowId).fetchHistory();
    expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
  });
});
