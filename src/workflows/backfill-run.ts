/**
 * backfillRunWorkflow: the parent of a run. Registers the run, then keeps at most
 * `limits.concurrency` partition workflows in flight (a sliding window over the plan,
 * paged from the ledger so history never holds the plan), and finalizes the run.
 * Its state and every change to it live in run-state.ts; this file wires them to Temporal.
 *
 * - Children are started with ParentClosePolicy.ABANDON: continue-as-new closes this
 *   execution, and the default (TERMINATE) would kill every running partition.
 * - Children report by signal to this workflow id; a report for a partition that is not
 *   in flight is a duplicate and is ignored.
 * - Operator decisions (pause, resume, cancel, limits) change state here first and are
 *   then written to the ledger by one activity at a time, which running partitions read.
 * - A Temporal cancellation of this workflow is turned into an orderly cancel.
 */
import {
  ActivityFailure,
  CancellationScope,
  CancelledFailure,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  sleep,
  proxyActivities,
  setHandler,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import { partitionWorkflowId } from '../shared/ids';
import { NON_RETRYABLE_FAILURES } from '../shared/failures';
import type { RunStatus } from '../shared/statuses';
import type { OperatorAction, PartitionReport } from '../shared/types';
import type { FrozenTransform } from '../specs/load';
import type { RunApproval } from '../activities/register-run';
import type { Spec } from '../specs/schema';
import { backfillPartitionWorkflow } from './backfill-partition';
import {
  approveUpdate,
  cancelSignal,
  HANDLER_DESCRIPTIONS,
  partitionConditionSignal,
  partitionFinishedSignal,
  pauseSignal,
  progressQuery,
  resumeSignal,
  setLimitsUpdate,
} from './messages';
import { publish, showDetails } from './publish';
import * as gates from './gate-state';
import * as run from './run-state';
import type { RunState } from './run-state';

export type { RunState } from './run-state';

export interface RunWorkflowInput {
  runId: string;
  spec: Spec;
  specFile?: string;
  specHash: string;
  transform: FrozenTransform;
  startedBy: string;
  /** The database the run was planned against (src/db/identity.ts): only workers connected to it register the run. */
  databaseIdentity?: string;
  /** Continue-as-new after this many history events even if the server has not suggested it yet. */
  maxHistoryEvents?: number;
  partitionHeartbeatTimeoutMs?: number;
  /** How often the run looks for partition workflows that closed without reporting (default 5 minutes). */
  reconcileIntervalMs?: number;
  /** `start --plan`: the approved plan the run must match when it registers, and the approver. */
  approval?: RunApproval;
  /** `start --only-stale`: the run covers only the spec's stale partitions. */
  onlyStale?: boolean;
  /** retry-failed: this execution is a new attempt of a finished run, re-running only its failed and cancelled partitions. */
  retry?: { attempt: number; actor: string; reason?: string };
  /** Carried across continue-as-new; absent on the first execution. */
  state?: RunState;
}

export interface RunResult {
  runId: string;
  status: RunStatus;
  partitions: { total: number; succeeded: number; failed: number; cancelled: number };
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
  /** After-actions: absent when the spec has none or the run did not succeed. */
  downstream?: 'succeeded' | 'failed';
}

const PAGE = 100;
const RECONCILE_EVERY_MS = 5 * 60_000;
/**
 * Continue as new from here: what arrives while the generation drains (reports of the
 * partitions in flight, the workflow tasks around them) must still fit under 10,000 events.
 */
const DEFAULT_MAX_HISTORY_EVENTS = 9_000;
/** The bound of executions started before 'history-bound-9000'. */
const FORMER_MAX_HISTORY_EVENTS = 10_000;

export async function backfillRunWorkflow(input: RunWorkflowInput): Promise<RunResult> {
  const { spec, runId } = input;
  const database = spec.database;
  const who = { runId, name: spec.name };
  // executions recorded before reconciliation existed replay without its timers
  const reconciling = patched('reconcile-in-flight');
  let finishing = false;
  const acts = proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });
  // checks that read whole partitions: alive by heartbeat, resumed from it on retry
  const checks = proxyActivities<Activities>({
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: '5 minutes',
    // a check that keeps failing is a failed check (the run holds or fails saying why), not a run that waits forever
    retry: { initialInterval: '1s', maximumInterval: '1 minute', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });
  /** A check that could not complete is a failed gate, with the reason. */
  const judged = async (what: string, check: () => Promise<run.GateVerdictLike>): Promise<run.GateVerdictLike> => {
    try {
      return await check();
    } catch (err) {
      const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
      return { passed: false, failures: [`${what} could not complete: ${cause}`], failureCount: 1, partitionsChecked: 0, incomplete: true };
    }
  };
  // executions recorded before the gates existed replay without them
  const gated = patched('gates-and-after');
  // executions recorded while each launch waited for its child's start replay that way
  const launchAhead = patched('launch-without-waiting');
  let starting = 0;
  let startFailure: Error | undefined;

  let s: RunState = input.state ?? run.initialRunState(spec.limits, new Date().toISOString());
  const progress = () => run.progress(s, who, Date.now());
  const show = () => showDetails(progress());
  const publishNow = () => publish(progress(), run.shownStatus(s));

  setHandler(pauseSignal, (a) => void (s = run.pause(s, a, uuid4())), { description: HANDLER_DESCRIPTIONS.pause });
  setHandler(resumeSignal, (a) => void (s = run.resume(s, a, uuid4())), { description: HANDLER_DESCRIPTIONS.resume });
  setHandler(cancelSignal, (a) => void (s = run.requestCancel(s, a, uuid4())), { description: HANDLER_DESCRIPTIONS.cancel });
  const applyReport = (report: PartitionReport) => {
    s = run.applyReport(s, report);
    // details only: search attributes (commands) change in the main loop
    show();
  };
  setHandler(partitionFinishedSignal, applyReport, { description: HANDLER_DESCRIPTIONS.partitionFinished });
  setHandler(partitionConditionSignal, (c) => ((s = run.applyCondition(s, c)), show()), { description: HANDLER_DESCRIPTIONS.partitionCondition });
  setHandler(progressQuery, progress, { description: HANDLER_DESCRIPTIONS.progress });
  setHandler(
    setLimitsUpdate,
    async (change) => {
      s = run.changeLimits(s, change, uuid4());
      const version = s.controlVersion;
      // return once the ledger holds the new limits: from then on every chunk that starts uses them
      await condition(() => s.syncedVersion >= version);
      return s.limits;
    },
    {
      // a rejected update leaves nothing in history
      validator: (change) => {
        const refusal = run.limitsChangeRefusal(s, runId, change);
        if (refusal) throw new Error(refusal);
      },
      description: HANDLER_DESCRIPTIONS.setLimits,
    },
  );
  setHandler(
    approveUpdate,
    async (who) => {
      s = gates.approve(s, who, uuid4());
      const version = s.controlVersion;
      await condition(() => s.syncedVersion >= version);
    },
    {
      validator: (_who: OperatorAction) => {
        const refusal = gates.approveRefusal(s, runId);
        if (refusal) throw new Error(refusal);
      },
      description: HANDLER_DESCRIPTIONS.approve,
    },
  );
  // an operator cancelling the workflow in the UI or CLI gets the same orderly stop as the cancel signal
  CancellationScope.current().cancelRequested.catch(() => {
    s = run.requestCancel(s, { actor: 'temporal', reason: 'workflow cancellation requested' }, uuid4(), true);
  });

  let queue: { id: string; ordinal: number }[] = [];
  let exhausted = false;
  const planLeft = () => !(exhausted && queue.length === 0);
  return CancellationScope.nonCancellable(async () => {
    if (!input.state) {
      const opening = input.retry
        ? await acts.startRunAttempt({ database, runId, ...input.retry, pageSize: PAGE })
        : await acts.registerRun({
            runId,
            workflowId: workflowInfo().workflowId,
            spec,
            specFile: input.specFile,
            specHash: input.specHash,
            transform: input.transform,
            startedBy: input.startedBy,
            databaseIdentity: input.databaseIdentity,
            ...(input.approval ? { approval: input.approval } : {}),
            ...(input.onlyStale ? { onlyStale: true } : {}),
            pageSize: PAGE,
          });
      s = run.opened(s, opening, input.retry !== undefined);
      queue = opening.firstPage;
      exhausted = queue.length < PAGE;
      // the distribution gate's baseline, before anything is written; a failed capture leaves
      // none, which fails that gate at the end, saying so
      if (gated && !input.retry && (spec.validate?.distributions?.length ?? 0) > 0) await checks.captureDistributions({ database, runId }).catch(() => 0);
      const canary = spec.validate?.canary;
      if (gated && canary && !input.retry) {
        const picked = await acts.pickCanary({ database, runId, count: canary.partitions });
        s = gates.canaryPicked(
          s,
          picked.map((p) => p.id),
        );
      }
      if (gated && spec.validate?.ramp && !input.retry) s = gates.rampStarted(s, gates.rampCutoffs(s.partitionsTotal, spec.validate.ramp));
    }
    const historyBound = input.maxHistoryEvents ?? (patched('history-bound-9000') ? DEFAULT_MAX_HISTORY_EVENTS : FORMER_MAX_HISTORY_EVENTS);
    const historyFull = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= historyBound;
    const continueIfFull = async () => {
      // handlers may be mid-flight; dropping them would lose an operator's action; a child
      // whose start is not yet confirmed is confirmed first
      await condition(() => allHandlersFinished() && starting === 0);
      if (run.isDirty(s)) await syncControl();
      s = { ...s, continuedAsNew: s.continuedAsNew + 1 };
      await continueAsNew<typeof backfillRunWorkflow>({ ...input, state: s });
    };

    publishNow();
    if (reconciling) void reconcileLoop();

    // the canary: its partitions alone, then its gates; nothing else is written before they pass
    while (s.canary?.phase === 'running' && !(s.cancelRequested && s.inFlight.length === 0)) {
      await condition(
        () =>
          run.isDirty(s) ||
          gates.canaryFinished(s) ||
          gates.canaryCanLaunch(s) ||
          (s.cancelRequested && s.inFlight.length === 0) ||
          historyFull() ||
          startFailure !== undefined,
      );
      if (startFailure) throw startFailure;
      if (run.isDirty(s)) {
        await syncControl();
        continue;
      }
      if (gates.canaryFinished(s)) {
        const partitionIds = s.canary.partitions;
        const verdict = await judged('the canary check', () => checks.checkCanary({ database, runId, partitionIds }));
        s = gates.canaryJudged(s, verdict, spec.validate?.canary?.approve === true, runId, uuid4());
        await syncControl();
        break;
      }
      if (historyFull()) await continueIfFull();
      if (!gates.canaryCanLaunch(s)) continue;
      const next = gates.canaryLaunched(s);
      s = next.s;
      await launch(next.id);
      publishNow();
    }
    // held: by a failed canary, or for approval; only approve or cancel ends it
    while (s.canary?.phase === 'held' && !s.cancelRequested) {
      await condition(() => run.isDirty(s) || s.canary?.phase !== 'held' || s.cancelRequested || historyFull());
      if (run.isDirty(s)) await syncControl();
      else if (historyFull()) await continueIfFull();
    }

    // ramp stages: the next partition waits while it lies beyond the stage that is running
    const beyondStage = () => queue.length > 0 && queue[0].ordinal >= gates.rampCutoff(s);
    const stageFinished = () => beyondStage() && gates.rampStageFinished(s, queue[0].ordinal);
    for (;;) {
      await condition(
        () =>
          run.isDirty(s) ||
          run.isFinished(s, planLeft()) ||
          (run.canLaunch(s, planLeft()) && !beyondStage()) ||
          stageFinished() ||
          historyFull() ||
          startFailure !== undefined,
      );
      if (startFailure) throw startFailure;
      if (run.isDirty(s)) {
        await syncControl();
        continue;
      }
      if (run.isFinished(s, planLeft())) break;
      if (historyFull()) await continueIfFull();
      if (stageFinished()) {
        const r = s.ramp!;
        const stage = { database, runId, stage: r.stage + 1, fromOrdinal: r.stage === 0 ? 0 : r.cutoffs[r.stage - 1], toOrdinal: r.cutoffs[r.stage] };
        const verdict = await judged(`the check of ramp stage ${stage.stage}`, () => checks.checkStage(stage));
        s = gates.rampJudged(s, verdict, runId, uuid4());
        await syncControl();
        continue;
      }
      if (beyondStage() || !run.canLaunch(s, planLeft())) continue;
      if (queue.length === 0) {
        queue = await acts.nextPartitions({ database, runId, fromOrdinal: s.nextOrdinal, limit: PAGE });
        exhausted = queue.length < PAGE;
        continue;
      }
      const next = queue.shift()!;
      s = run.launched(s, next);
      await launch(next.id);
      publishNow();
    }

    finishing = true;
    if (gated && !s.cancelRequested && s.counts.failed === 0 && s.counts.cancelled === 0) {
      // the whole-run check: finalizeRun reads its verdict from the ledger
      s = { ...s, finalCheck: await judged('the final check', () => checks.checkFinal({ database, runId })) };
      publishNow();
    }
    // a final check that could not complete fails the run: finalizeRun records why
    const checkError = s.finalCheck?.incomplete ? s.finalCheck.failures[0] : undefined;
    const final = await acts.finalizeRun({ database, runId, ...(checkError ? { checkError } : {}) });
    s = { ...s, status: final.status };
    publishNow();
    let downstream: RunResult['downstream'];
    if (gated && final.status === 'succeeded' && (spec.after?.length ?? 0) > 0) {
      try {
        downstream = (await checks.runAfterActions({ database, runId })).downstream;
      } catch {
        // the data is right and the run stays succeeded; what failed is recorded for `backfill after`
        downstream = 'failed';
      }
    }
    // verified and downstream refreshed: temporary state may go (cleanupRun checks both again)
    if (gated && final.status === 'succeeded' && downstream !== 'failed') await checks.cleanupRun({ database, runId }).catch(() => undefined);
    const result: RunResult = {
      runId,
      status: final.status,
      partitions: { total: final.total, succeeded: final.byStatus.succeeded, failed: final.byStatus.failed, cancelled: final.byStatus.cancelled },
      rowsRead: final.rowsRead,
      rowsWritten: final.rowsWritten,
      rowsUnchanged: final.rowsUnchanged,
      ...(downstream ? { downstream } : {}),
    };
    if (s.cancelledByTemporal)
      throw new CancelledFailure(`backfill ${spec.name}/${runId} cancelled; ${result.rowsWritten} rows were written before it stopped`);
    return result;
  });

  async function syncControl(): Promise<void> {
    const version = s.controlVersion;
    const events = s.pendingEvents.slice();
    const status = await acts.syncRunControl({ database, runId, version, paused: s.paused, cancelRequested: s.cancelRequested, limits: s.limits, events });
    s = run.synced(s, version, events, status);
    publishNow();
  }

  /**
   * A partition workflow terminated (or timed out) by hand never reports, and the run would wait
   * for it forever. Now and then, ask Temporal about partitions that have been in flight for a
   * whole interval; those that closed without a report are recorded failed (retry-failed re-runs
   * them from their cursors) and reported here like any other outcome.
   */
  async function reconcileLoop(): Promise<void> {
    let previous: string[] = [];
    for (;;) {
      await sleep(input.reconcileIntervalMs ?? RECONCILE_EVERY_MS);
      if (finishing) return;
      // a start still in progress is not a lost partition: only those seen in flight last time too
      const suspects = s.inFlight.filter((id) => previous.includes(id));
      previous = s.inFlight.slice();
      if (suspects.length === 0) continue;
      for (const report of await acts.reconcilePartitions({ database, runId, name: spec.name, partitionIds: suspects })) applyReport(report);
    }
  }

  /**
   * Starts a partition's workflow. The loop does not wait for the start to be confirmed (a
   * workflow task per partition): children launched in one activation start together, and a
   * start that fails for good is thrown from the main loop.
   */
  async function launch(partitionId: string): Promise<void> {
    if (!launchAhead) return startPartition(partitionId);
    starting++;
    startPartition(partitionId)
      .catch((err: Error) => void (startFailure ??= err))
      .finally(() => void starting--);
  }

  async function startPartition(partitionId: string): Promise<void> {
    try {
      await startChild(backfillPartitionWorkflow, {
        workflowId: partitionWorkflowId(spec.name, runId, partitionId),
        args: [{ database, runId, partitionId, runWorkflowId: workflowInfo().workflowId, heartbeatTimeoutMs: input.partitionHeartbeatTimeoutMs }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        staticSummary: `partition ${partitionId} of ${spec.name}/${runId}`,
      });
    } catch (err) {
      // already running (started by an earlier execution of this run): it will report to us
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      s = run.launchFailed(s, partitionId);
      if (isCancellation(err)) return;
      throw err;
    }
  }
}
