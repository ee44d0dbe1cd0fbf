/**
 * One execution of a run workflow: its state (changed only through run-state.ts,
 * gate-state.ts and split-state.ts), the plan page it is working through, and the mechanics
 * every phase shares — writing operator decisions to the ledger, publishing progress,
 * launching partitions, continuing as new. The phases (open, canary, partitions, finish) drive it.
 *
 * The `patched()` calls are made in the constructor in the order executions have always
 * recorded them; moving one past a command would break the replay of running executions.
 */
import {
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  startChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { partitionGroupWorkflowId, partitionWorkflowId } from '../../domain/ids';
import type { PartitionWorkflowInput } from '../../domain/types';
import { backfillPartitionWorkflow } from '../backfill-partition';
import { publish, showDetails } from '../publish';
import { progress } from '../progress';
import * as run from '../run-state';
import * as control from '../control-state';
import type { RunState } from '../run-state';
import { checkActivities, ledgerActivities, startPartitionWorkflow } from './proxies';
import type { RunWorkflow, RunWorkflowInput } from './input';
import type { NotifyTarget } from '../../specs/notify-schema';

/** Plan rows read from the ledger at a time: history never holds the whole plan. */
export const PAGE = 100;
/**
 * Continue as new from here: what arrives while the generation drains (reports of the
 * partitions in flight, the workflow tasks around them) must still fit under 10,000 events.
 */
const DEFAULT_MAX_HISTORY_EVENTS = 9_000;
/** The bound of executions started before 'history-bound-9000'. */
const FORMER_MAX_HISTORY_EVENTS = 10_000;

export class RunExecution {
  readonly input: RunWorkflowInput;
  readonly runId: string;
  readonly database: string;
  /** The registering worker's BACKFILL_NOTIFY, when the spec names no one (run/notifier.ts). */
  workerNotify?: NotifyTarget[];
  /** Executions recorded before reconciliation existed replay without its timers. */
  readonly reconciling: boolean;
  /** Executions recorded before the gates existed replay without them. */
  readonly gated: boolean;
  /** Executions recorded while each launch waited for its child's start replay that way. */
  private readonly launchAhead: boolean;
  /** Executions recorded while partitions were the run's children replay that way (partitionsStartedAlone). */
  private readonly startsAlone: boolean;
  /** Ledger steps and checks, on the run's database queue: only workers connected to its database take them. */
  readonly acts: ReturnType<typeof ledgerActivities>;
  readonly checks: ReturnType<typeof checkActivities>;

  s: RunState;
  /** The plan's next partitions, in ordinal order. */
  queue: { id: string; ordinal: number }[] = [];
  /** The ledger has no partitions beyond the queue. */
  exhausted = false;
  /** What the run looked like when a cut of its tail last found nothing worth cutting (split-state.ts). */
  splitTried: string | undefined;
  /** The run is past its loops: reconciliation stops. */
  finishing = false;
  /** Partition reports and conditions received by this execution: news from the database's workers (run/worker-watch.ts). */
  reportsApplied = 0;
  /** Continue-as-new syncs until no handler waits (executions before the patch synced once). */
  private readonly syncsUntilHandled: boolean;
  /** How reports of partitions not in flight count (run-state.ts `applyReport`). */
  readonly reportRules: run.ReportRules | undefined;
  /** Executions recorded before groups started every small partition alone. */
  private readonly groupsSmall: boolean;
  /** Child starts not yet confirmed; continue-as-new waits for them. */
  private starting = 0;
  /** A child start that failed for good, thrown from the loop that waits on it. */
  private startFailure: Error | undefined;
  private historyBound = FORMER_MAX_HISTORY_EVENTS;

  constructor(input: RunWorkflowInput) {
    this.input = input;
    this.runId = input.runId;
    this.database = input.spec.database;
    this.acts = ledgerActivities(input.databaseQueue);
    this.checks = checkActivities(input.databaseQueue);
    this.reconciling = patched('reconcile-in-flight');
    this.gated = patched('gates-and-after');
    this.launchAhead = patched('launch-without-waiting');
    this.startsAlone = patched('partitions-started-alone');
    this.s = input.state ?? run.initialRunState(input.spec.limits, new Date().toISOString());
    // executions recorded before it dropped a report that came before its partition's launch
    this.reportRules = patched('reports-before-launch') ? { attempt: input.kind === 'retry' ? input.attempt : 1 } : undefined;
    // executions recorded before it synced once before continuing as new, whatever handlers still waited on
    this.syncsUntilHandled = patched('sync-until-handled');
    // executions recorded before it started each small partition as a workflow of its own
    this.groupsSmall = patched('partition-groups');
  }

  get spec() {
    return this.input.spec;
  }

  /** Called once the run is open, where executions have always recorded the 'history-bound-9000' marker. */
  boundHistory(): void {
    this.historyBound = this.input.maxHistoryEvents ?? (patched('history-bound-9000') ? DEFAULT_MAX_HISTORY_EVENTS : FORMER_MAX_HISTORY_EVENTS);
  }

  progress() {
    return progress(this.s, { runId: this.runId, name: this.spec.name }, Date.now());
  }

  /** Details only: safe in signal handlers, where commands would interleave with the main loop's. */
  show(): void {
    showDetails(this.progress());
  }

  /** Details and search attributes; from the phases' loops only. */
  publishNow(): void {
    publish(this.progress(), run.shownStatus(this.s));
  }

  planLeft(): boolean {
    return !(this.exhausted && this.queue.length === 0);
  }

  historyFull(): boolean {
    return workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= this.historyBound;
  }

  /** The loops wake on this: a child that could not start for good ends the execution with its error. */
  get startFailed(): boolean {
    return this.startFailure !== undefined;
  }

  rethrowStartFailure(): void {
    if (this.startFailure) throw this.startFailure;
  }

  /** Writes the operator decisions not yet in the ledger (pause, resume, cancel, limits, approvals). */
  async syncControl(): Promise<void> {
    const s = this.s;
    const version = s.controlVersion;
    const events = s.pendingEvents.slice();
    const status = await this.acts.syncRunControl({
      database: this.database,
      runId: this.runId,
      version,
      paused: s.paused,
      cancelRequested: s.cancelRequested,
      limits: s.limits,
      events,
    });
    this.s = control.synced(this.s, version, events, status);
    this.publishNow();
  }

  async continueIfFull(): Promise<void> {
    // handlers may be mid-flight; dropping them would lose an operator's action; a child
    // whose start is not yet confirmed is confirmed first
    if (!this.syncsUntilHandled) {
      await condition(() => allHandlersFinished() && this.starting === 0);
      if (control.isDirty(this.s)) await this.syncControl();
    } else {
      // an update answers once its change is in the ledger: synced here, or it and this wait would
      // wait for each other; one accepted during a sync is synced by the next turn
      for (;;) {
        await condition(() => this.starting === 0 && (allHandlersFinished() || control.isDirty(this.s)));
        if (!control.isDirty(this.s)) break;
        await this.syncControl();
      }
    }
    this.s = { ...this.s, continuedAsNew: this.s.continuedAsNew + 1 };
    await continueAsNew<RunWorkflow>({ ...this.input, state: this.s });
  }

  async nextPage(): Promise<void> {
    this.queue = await this.acts.nextPartitions({ database: this.database, runId: this.runId, fromOrdinal: this.s.nextOrdinal, limit: PAGE });
    this.exhausted = this.queue.length < PAGE;
  }

  /**
   * Starts a partition's workflow: a workflow of its own, started by a local activity, so that
   * no child event reaches the run (activities/start-partition.ts says why). The loop does not
   * wait for the start to be confirmed: partitions launched in one activation start together,
   * and a start that fails for good is thrown from the loop waiting on `startFailed`.
   */
  async launch(partitionId: string): Promise<void> {
    if (!this.launchAhead) return this.startPartition(partitionId);
    this.starting++;
    this.startPartition(partitionId)
      .catch((err: Error) => void (this.startFailure ??= err))
      .finally(() => void this.starting--);
  }

  /**
   * How many of the plan's next partitions to launch together, in one group workflow (1: alone).
   * Groups need the local first attempt: small partitions of a SQL transform, started on their own.
   */
  groupSize(free: number): number {
    return run.groupSize(this.s, free, {
      groups: this.groupsSmall && !this.input.partitionsAlone,
      startsAlone: this.startsAlone,
      sqlTransform: this.input.transform.kind !== 'module',
    });
  }

  /** Starts a group of launched partitions (partitions.length > 1); as `launch`, without waiting for the start. */
  launchGroup(partitionIds: string[]): void {
    const workflowId = partitionGroupWorkflowId(this.spec.name, this.runId, partitionIds);
    this.s = run.groupLaunched(this.s, partitionIds, workflowId);
    this.starting++;
    this.startGroup(workflowId, partitionIds)
      .catch((err: Error) => void (this.startFailure ??= err))
      .finally(() => void this.starting--);
  }

  private async startGroup(workflowId: string, partitionIds: string[]): Promise<void> {
    const { spec, runId } = this;
    const members = partitionIds.map((partitionId) => this.partitionInput(partitionId, true));
    const taskQueue = this.input.databaseQueue ?? workflowInfo().taskQueue;
    const summary = `${partitionIds.length} partitions of ${spec.name}/${runId}, from ${partitionIds[0]}`;
    try {
      await startPartitionWorkflow({ workflowId, taskQueue, input: members[0], group: { members, reportsLocally: true }, summary });
    } catch (err) {
      // already running (started by an earlier execution of this run): its members will report to us
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      for (const id of partitionIds) this.s = run.launchFailed(this.s, id);
      if (isCancellation(err)) return;
      throw err;
    }
  }

  private partitionInput(partitionId: string, localFirst: boolean): PartitionWorkflowInput {
    const budget = this.input.partitionLocalBudgetMs;
    return {
      database: this.database,
      runId: this.runId,
      partitionId,
      runWorkflowId: workflowInfo().workflowId,
      heartbeatTimeoutMs: this.input.partitionHeartbeatTimeoutMs,
      ...(localFirst ? { localFirst, ...(budget !== undefined ? { localBudgetMs: budget } : {}) } : {}),
    };
  }

  private async startPartition(partitionId: string): Promise<void> {
    const { spec, runId } = this;
    const workflowId = partitionWorkflowId(spec.name, runId, partitionId);
    const summary = `partition ${partitionId} of ${spec.name}/${runId}`;
    try {
      if (this.startsAlone) {
        // a partition runs where its database is: its workflow and activities on the database's queue
        const taskQueue = this.input.databaseQueue ?? workflowInfo().taskQueue;
        // the start is a local activity, so its input is free to change. A small partition of a SQL
        // transform runs its first attempt locally: its work is the database's. A module transform
        // computes in the worker, and its partitions spread over the workers as activities
        const localFirst = this.input.transform.kind !== 'module' && run.smallPartitions(this.s);
        await startPartitionWorkflow({ workflowId, taskQueue, input: this.partitionInput(partitionId, localFirst), summary });
        return;
      }
      await startChild(backfillPartitionWorkflow, {
        workflowId,
        args: [this.partitionInput(partitionId, false)],
        // continue-as-new closes this execution, and the default (TERMINATE) would kill every running partition
        parentClosePolicy: ParentClosePolicy.ABANDON,
        ...(this.input.databaseQueue ? { taskQueue: this.input.databaseQueue } : {}),
        staticSummary: summary,
      });
    } catch (err) {
      // already running (started by an earlier execution of this run): it will report to us
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      this.s = run.launchFailed(this.s, partitionId);
      if (isCancellation(err)) return;
      throw err;
    }
  }

  /** A fresh id for an operator event, drawn from the workflow's deterministic random. */
  eventId(): string {
    return uuid4();
  }
}
