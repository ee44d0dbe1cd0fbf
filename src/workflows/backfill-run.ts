/**
 * backfillRunWorkflow: the parent of a run. Registers the run, then keeps at most
 * `limits.concurrency` partition workflows in flight (a sliding window over the plan,
 * paged from the ledger so history never holds the plan), and finalizes the run.
 *
 * - Children are started with ParentClosePolicy.ABANDON: continue-as-new closes this
 *   execution, and the default (TERMINATE) would kill every running partition.
 * - Children report by signal to this workflow id; a report for a partition that is not
 *   in flight is a duplicate and is ignored.
 * - Operator decisions (pause, resume, cancel) change state here first and are then
 *   written to the ledger by one activity at a time, which running partitions read.
 * - A Temporal cancellation of this workflow is turned into an orderly cancel.
 */
import {
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
  setCurrentDetails,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Activities } from '../activities';
import type { ControlEvent } from '../activities/run-control';
import { partitionWorkflowId } from '../shared/ids';
import { NON_RETRYABLE_FAILURES } from '../shared/failures';
import { FINISHED_RUN_STATUSES, type RunStatus } from '../shared/statuses';
import type { Limits, OperatorAction, PartitionCondition, PartitionReport, RowCounts, RunProgress } from '../shared/types';
import type { FrozenTransform } from '../specs/load';
import type { Spec } from '../specs/schema';
import { backfillPartitionWorkflow } from './backfill-partition';
import { applyLimitsChange, limitsChangeProblem } from '../shared/limits';
import { cancelSignal, HANDLER_DESCRIPTIONS, partitionConditionSignal, partitionFinishedSignal, pauseSignal, progressQuery, resumeSignal, setLimitsUpdate } from './messages';
import { renderProgressMarkdown } from './progress';
import { BackfillPercent, BackfillRowsWritten, BackfillStatus } from './search-attributes';

export interface RunWorkflowInput {
  runId: string;
  spec: Spec;
  specFile?: string;
  specHash: string;
  transform: FrozenTransform;
  startedBy: string;
  /** Continue-as-new after this many history events even if the server has not suggested it yet. */
  maxHistoryEvents?: number;
  partitionHeartbeatTimeoutMs?: number;
  /** How often the run looks for partition workflows that closed without reporting (default 5 minutes). */
  reconcileIntervalMs?: number;
  /** retry-failed: this execution is a new attempt of a finished run, re-running only its failed and cancelled partitions. */
  retry?: { attempt: number; actor: string; reason?: string };
  /** Carried across continue-as-new; absent on the first execution. */
  state?: RunState;
}

export interface RunState {
  partitionsTotal: number;
  nextOrdinal: number;
  inFlight: string[];
  counts: { succeeded: number; failed: number; cancelled: number };
  finished: RowCounts;
  paused: boolean;
  cancelRequested: boolean;
  cancelledByTemporal: boolean;
  limits: Limits;
  controlVersion: number;
  syncedVersion: number;
  pendingEvents: ControlEvent[];
  status: RunStatus;
  startedAt: string;
  continuedAsNew: number;
  heldBy?: OperatorAction;
  lastError?: string;
  /** Running partitions that are slowed or held, by partition id; absent in state carried from before it existed. */
  conditions?: Record<string, PartitionCondition>;
}

export interface RunResult {
  runId: string;
  status: RunStatus;
  partitions: { total: number; succeeded: number; failed: number; cancelled: number };
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
}

const PAGE = 100;
const RECONCILE_EVERY_MS = 5 * 60_000;
const DEFAULT_MAX_HISTORY_EVENTS = 10_000;

export async function backfillRunWorkflow(input: RunWorkflowInput): Promise<RunResult> {
  const { spec, runId } = input;
  const database = spec.database;
  // executions recorded before reconciliation existed replay without its timers
  const reconciling = patched('reconcile-in-flight');
  let finishing = false;
  const acts = proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
  });

  const s: RunState = input.state ?? {
    partitionsTotal: 0,
    nextOrdinal: 0,
    inFlight: [],
    counts: { succeeded: 0, failed: 0, cancelled: 0 },
    finished: { rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0 },
    paused: false,
    cancelRequested: false,
    cancelledByTemporal: false,
    limits: spec.limits,
    controlVersion: 0,
    syncedVersion: 0,
    pendingEvents: [],
    status: 'pending',
    startedAt: new Date().toISOString(),
    continuedAsNew: 0,
    conditions: {},
  };
  const conditions = (s.conditions ??= {});

  const control = (kind: ControlEvent['kind'], action: OperatorAction | undefined, apply: () => void, detail?: Record<string, unknown>) => {
    apply();
    s.controlVersion += 1;
    s.pendingEvents.push({ key: `${kind}-${uuid4()}`, kind, actor: action?.actor ?? 'unknown', reason: action?.reason, detail });
    return s.controlVersion;
  };
  const who = (a: OperatorAction | undefined): OperatorAction => ({ actor: a?.actor ?? 'unknown', reason: a?.reason });
  setHandler(pauseSignal, (a) => { if (!s.paused && !s.cancelRequested) control('paused', a, () => ((s.paused = true), (s.heldBy = who(a)))); }, { description: HANDLER_DESCRIPTIONS.pause });
  setHandler(resumeSignal, (a) => { if (s.paused && !s.cancelRequested) control('resumed', a, () => ((s.paused = false), (s.heldBy = undefined))); }, { description: HANDLER_DESCRIPTIONS.resume });
  setHandler(cancelSignal, (a) => { if (!s.cancelRequested) control('cancel-requested', a, () => ((s.cancelRequested = true), (s.heldBy = who(a)))); }, { description: HANDLER_DESCRIPTIONS.cancel });
  /** A partition's outcome, from its own signal or from reconciliation; a second report for the same partition is ignored. */
  const applyReport = (report: PartitionReport) => {
    const at = s.inFlight.indexOf(report.partitionId);
    if (at === -1) return; // a duplicate report, or one for a partition this run did not start
    s.inFlight.splice(at, 1);
    delete conditions[report.partitionId];
    if (report.status === 'succeeded' || report.status === 'failed' || report.status === 'cancelled') s.counts[report.status] += 1;
    s.finished.rowsRead += report.rowsRead;
    s.finished.rowsWritten += report.rowsWritten;
    s.finished.rowsUnchanged += report.rowsUnchanged;
    if (report.status === 'failed') s.lastError = report.error ?? `partition ${report.partitionId} failed`;
    // details only: they are not in history; search attributes (commands) change in the main loop
    setCurrentDetails(renderProgressMarkdown(progress(input, s)));
  };
  setHandler(partitionFinishedSignal, applyReport, { description: HANDLER_DESCRIPTIONS.partitionFinished });
  setHandler(
    partitionConditionSignal,
    (c: PartitionCondition) => {
      // a late report from a partition that has finished (or a zombie attempt) must not resurrect it
      if (!s.inFlight.includes(c.partitionId)) return;
      if (c.state === 'writing') delete conditions[c.partitionId];
      else conditions[c.partitionId] = c;
      setCurrentDetails(renderProgressMarkdown(progress(input, s)));
    },
    { description: HANDLER_DESCRIPTIONS.partitionCondition },
  );
  setHandler(progressQuery, () => progress(input, s), { description: HANDLER_DESCRIPTIONS.progress });
  setHandler(
    setLimitsUpdate,
    async (change) => {
      const from = s.limits;
      const version = control('limits-changed', change, () => (s.limits = applyLimitsChange(from, change)), { from, to: applyLimitsChange(from, change) });
      // return once the ledger holds the new limits: from then on every chunk that starts uses them
      await condition(() => s.syncedVersion >= version);
      return s.limits;
    },
    {
      // a rejected update leaves nothing in history
      validator: (change) => {
        const problem = limitsChangeProblem(change);
        if (problem) throw new Error(problem);
        if (s.cancelRequested || FINISHED_RUN_STATUSES.includes(s.status)) throw new Error(`run ${runId} is ${s.cancelRequested ? 'cancelling' : s.status}; its limits can no longer change`);
      },
      description: HANDLER_DESCRIPTIONS.setLimits,
    },
  );

  // an operator cancelling the workflow in the UI or CLI gets the same orderly stop as the cancel signal
  CancellationScope.current().cancelRequested.catch(() => {
    if (!s.cancelRequested) {
      s.cancelledByTemporal = true;
      const action = { actor: 'temporal', reason: 'workflow cancellation requested' };
      control('cancel-requested', action, () => ((s.cancelRequested = true), (s.heldBy = action)));
    }
  });

  let queue: { id: string; ordinal: number }[] = [];
  let exhausted = false;
  return CancellationScope.nonCancellable(async () => {
    if (!input.state && input.retry) {
      const attempt = await acts.startRunAttempt({ database, runId, ...input.retry, pageSize: PAGE });
      s.partitionsTotal = attempt.partitionsTotal;
      s.counts.succeeded = attempt.succeeded;
      s.finished = attempt.finished;
      // the ledger's control version only grows: continue from it, or our writes would be refused as stale
      s.controlVersion = s.syncedVersion = attempt.controlVersion;
      s.status = 'running';
      queue = attempt.firstPage;
      exhausted = queue.length < PAGE;
    } else if (!input.state) {
      const registered = await acts.registerRun({
        runId,
        workflowId: workflowInfo().workflowId,
        spec,
        specFile: input.specFile,
        specHash: input.specHash,
        transform: input.transform,
        startedBy: input.startedBy,
        pageSize: PAGE,
      });
      s.partitionsTotal = registered.partitionsTotal;
      s.status = 'running';
      queue = registered.firstPage;
      exhausted = queue.length < PAGE;
    }

    const finishedAll = () => s.inFlight.length === 0 && (s.cancelRequested || (exhausted && queue.length === 0));
    const canLaunch = () => !s.paused && !s.cancelRequested && s.inFlight.length < s.limits.concurrency && !(exhausted && queue.length === 0);
    const dirty = () => s.controlVersion !== s.syncedVersion;
    const historyFull = () =>
      workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= (input.maxHistoryEvents ?? DEFAULT_MAX_HISTORY_EVENTS);

    publish(input, s);
    if (reconciling) void reconcileLoop();
    for (;;) {
      await condition(() => dirty() || finishedAll() || canLaunch() || historyFull());
      if (dirty()) {
        await syncControl();
        continue;
      }
      if (finishedAll()) break;
      if (historyFull()) {
        // handlers may be mid-flight; dropping them would lose an operator's action
        await condition(allHandlersFinished);
        if (dirty()) await syncControl();
        s.continuedAsNew += 1;
        await continueAsNew<typeof backfillRunWorkflow>({ ...input, state: s });
      }
      if (queue.length === 0) {
        queue = await acts.nextPartitions({ database, runId, fromOrdinal: s.nextOrdinal, limit: PAGE });
        exhausted = queue.length < PAGE;
        continue;
      }
      const next = queue.shift()!;
      s.nextOrdinal = next.ordinal + 1;
      // in flight before the start resolves: a fast child may report in the same activation
      s.inFlight.push(next.id);
      await launch(next.id);
      publish(input, s);
    }

    finishing = true;
    const final = await acts.finalizeRun({ database, runId });
    s.status = final.status;
    publish(input, s);
    const result: RunResult = {
      runId,
      status: final.status,
      partitions: { total: final.total, succeeded: final.byStatus.succeeded, failed: final.byStatus.failed, cancelled: final.byStatus.cancelled },
      rowsRead: final.rowsRead,
      rowsWritten: final.rowsWritten,
      rowsUnchanged: final.rowsUnchanged,
    };
    if (s.cancelledByTemporal) throw new CancelledFailure(`backfill ${spec.name}/${runId} cancelled; ${result.rowsWritten} rows were written before it stopped`);
    return result;
  });

  async function syncControl(): Promise<void> {
    const version = s.controlVersion;
    const events = s.pendingEvents.slice();
    s.status = await acts.syncRunControl({ database, runId, version, paused: s.paused, cancelRequested: s.cancelRequested, limits: s.limits, events });
    s.syncedVersion = Math.max(s.syncedVersion, version);
    s.pendingEvents = s.pendingEvents.filter((e) => !events.includes(e));
    publish(input, s);
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

  async function launch(partitionId: string): Promise<void> {
    const workflowId = partitionWorkflowId(spec.name, runId, partitionId);
    try {
      await startChild(backfillPartitionWorkflow, {
        workflowId,
        args: [{ database, runId, partitionId, runWorkflowId: workflowInfo().workflowId, heartbeatTimeoutMs: input.partitionHeartbeatTimeoutMs }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        staticSummary: `partition ${partitionId} of ${spec.name}/${runId}`,
      });
    } catch (err) {
      // already running (started by an earlier execution of this run): it will report to us
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
        s.inFlight.splice(s.inFlight.indexOf(partitionId), 1);
        if (isCancellation(err)) return;
        throw err;
      }
    }
  }
}

function progress(input: RunWorkflowInput, s: RunState): RunProgress {
  const done = s.counts.succeeded + s.counts.failed + s.counts.cancelled;
  const elapsedMin = (Date.now() - new Date(s.startedAt).getTime()) / 60_000;
  const perMinute = done > 0 && elapsedMin > 0 ? done / elapsedMin : null;
  const remaining = Math.max(0, s.partitionsTotal - done);
  return {
    runId: input.runId,
    name: input.spec.name,
    status: s.status,
    paused: s.paused,
    cancelRequested: s.cancelRequested,
    partitions: {
      total: s.partitionsTotal,
      pending: Math.max(0, s.partitionsTotal - done - s.inFlight.length),
      running: s.inFlight.length,
      ...s.counts,
    },
    finished: { ...s.finished },
    limits: s.limits,
    startedAt: s.startedAt,
    partitionsPerMinute: perMinute,
    rowsPerSecond: elapsedMin > 0 && s.finished.rowsRead > 0 ? Math.round(s.finished.rowsRead / (elapsedMin * 60)) : null,
    etaSeconds: perMinute ? Math.round((remaining / perMinute) * 60) : null,
    continuedAsNew: s.continuedAsNew,
    heldBy: s.heldBy,
    lastError: s.lastError,
    conditions: Object.values(s.conditions ?? {}).sort((a, b) => (a.partitionId < b.partitionId ? -1 : 1)),
  };
}

/** Progress for the Web UI: current details (not in history) and a few search attributes (coarse, to keep history small). */
function publish(input: RunWorkflowInput, s: RunState): void {
  const p = progress(input, s);
  setCurrentDetails(renderProgressMarkdown(p));
  const done = p.partitions.succeeded + p.partitions.failed + p.partitions.cancelled;
  const percent = p.partitions.total > 0 ? Math.floor((100 * done) / p.partitions.total) : 0;
  const status = s.paused && !s.cancelRequested ? 'paused' : s.status;
  const attrs = workflowInfo().typedSearchAttributes;
  const pending: Parameters<typeof upsertSearchAttributes>[0] = [];
  if (attrs.get(BackfillStatus) !== status) pending.push({ key: BackfillStatus, value: status });
  // whole tens only: every upsert is a history event
  if ((attrs.get(BackfillPercent) ?? -1) < percent - (percent % 10) || (percent === 100 && attrs.get(BackfillPercent) !== 100)) {
    pending.push({ key: BackfillPercent, value: percent - (percent % 10) });
    pending.push({ key: BackfillRowsWritten, value: p.finished.rowsWritten });
  }
  if (pending.length > 0) upsertSearchAttributes(pending);
}
