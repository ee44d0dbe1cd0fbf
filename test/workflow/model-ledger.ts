/**
 * A model of the ledger and the workers, in the test process, for the workflow tier: the run
 * and partition workflows run unchanged on a real Temporal dev server and call these
 * activities, which keep the ledger's rules (control versions only grow, a partition is
 * processed until it finishes once, paused partitions wait, cancelled ones stop) in memory and
 * record what happened, so a test can assert the workflow's wiring — order, concurrency,
 * holds, continue-as-new — in seconds. What the real activities do to PostgreSQL is the
 * integration tier's business.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Activities } from '../../src/activities';
import { reportPartitions } from '../../src/activities/report-partitions';
import { startPartitionActivity } from '../../src/activities/start-partition';
import type { GateVerdict } from '../../src/gates/gate-activities';
import type { FinalizeRunResult, SyncRunControlInput } from '../../src/activities/run-control';
import { FailureType } from '../../src/domain/failures';
import type { RunStatus } from '../../src/domain/statuses';
import type { PartitionReport } from '../../src/domain/types';
import type { ControlEvent, RunOpening } from '../../src/workflows/run-state';

type PartitionStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface ModelPartition {
  id: string;
  ordinal: number;
  status: PartitionStatus;
  /** How many times a worker took it up. */
  processed: number;
}

export interface ModelOptions {
  partitions: number;
  /** How long one partition takes to process. */
  processMs?: number;
  /** Rows each partition writes. */
  rows?: number;
  /** Partitions whose processing fails for good (a data error). */
  failing?: string[];
  /** Partitions whose worker never finishes them (until the activity is cancelled). */
  stuck?: string[];
  /**
   * Activities whose first attempt is lost with its worker: it neither answers nor heartbeats
   * (until this worker shuts down), and only Temporal's timeouts can hand it to another attempt.
   */
  lostOnce?: (keyof Activities)[];
  /** The rows the plan counted, as registration reports them: with a chunk or two a partition, partitions are small. */
  rowsPlanned?: number;
  /** A group's report signal from its local activity fails (the run unreachable for it), so the group sends it as a command. */
  groupReportFails?: boolean;
  /** The model's worker runs at most this many local activities at once (the SDK's default when absent). */
  localSlots?: number;
}

export type Verdicts = { canary?: GateVerdict; stages?: Record<number, GateVerdict>; final?: GateVerdict | Error };

const PASSED: GateVerdict = { passed: true, failures: [], failureCount: 0, partitionsChecked: 1 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const partitionId = (ordinal: number) => `p${String(ordinal).padStart(4, '0')}`;

export class ModelLedger {
  readonly partitions: ModelPartition[];
  paused = false;
  /** processPartition calls that ran as activities, not as their workflow's local attempt. */
  activityAttempts = 0;
  cancelRequested = false;
  version = 0;
  readonly events: ControlEvent[] = [];
  /** Every activity call, in the order it began: `name` or `name:detail`. */
  readonly calls: string[] = [];
  inFlightNow = 0;
  maxInFlight = 0;
  /** Partitions that got past the pause check and did their work (a paused run's launched partitions wait before it). */
  worked = 0;
  verdicts: Verdicts = {};
  /** How many times the final check lands on a worker connected to another database first. */
  misroutedChecks = 0;
  /** How reconciliation learns whether a partition's workflow closed (the real one asks Temporal). */
  workflowClosed: (partitionId: string) => Promise<boolean> = async () => false;
  private readonly options: Required<ModelOptions>;

  constructor(options: ModelOptions) {
    this.options = { processMs: 50, rows: 10, failing: [], stuck: [], lostOnce: [], rowsPlanned: 0, groupReportFails: false, localSlots: 0, ...options };
    this.partitions = Array.from({ length: options.partitions }, (_, i) => ({ id: partitionId(i), ordinal: i, status: 'pending', processed: 0 }));
  }

  count(status: PartitionStatus): number {
    return this.partitions.filter((p) => p.status === status).length;
  }

  /** The ordinals of processPartition calls in the order they began. */
  processedOrder(): number[] {
    return this.calls.filter((c) => c.startsWith('processPartition:')).map((c) => Number(c.slice('processPartition:p'.length)));
  }

  private status(): RunStatus {
    if (this.cancelRequested) return 'cancelling';
    return 'running';
  }

  private partition(id: string): ModelPartition {
    const p = this.partitions.find((x) => x.id === id);
    if (!p) throw ApplicationFailure.nonRetryable(`no partition ${id}`);
    return p;
  }

  private page(fromOrdinal: number, limit: number) {
    return this.partitions
      .filter((p) => p.ordinal >= fromOrdinal && p.status === 'pending')
      .slice(0, limit)
      .map(({ id, ordinal }) => ({ id, ordinal }));
  }

  private report(p: ModelPartition): PartitionReport {
    const rows = p.status === 'succeeded' ? this.options.rows : 0;
    return { partitionId: p.id, status: p.status, chunks: 1, rowsRead: rows, rowsWritten: rows, rowsUnchanged: 0 };
  }

  /**
   * The model's activities; with `label`, each call is first recorded as `label:name` (a worker
   * that should never be handed the run's work records what it was handed anyway).
   */
  activities(label?: string): Partial<Activities> {
    const all = this.losingFirstAttempts(this.modelActivities());
    // the real one: the run's local activity, on the worker of the run's workflow task whatever its
    // queue, touches Temporal alone (its partitions' workflows are the model's to answer)
    // and a group's report, sent the same way (or failing, for the group's command to send it)
    const launch = {
      startPartitionWorkflow: startPartitionActivity(undefined),
      reportPartitions: this.options.groupReportFails ? async () => false : reportPartitions,
    };
    if (!label) return { ...all, ...launch };
    const recorded = Object.fromEntries(
      Object.entries(all).map(([name, fn]) => [
        name,
        (...args: unknown[]) => {
          this.calls.push(`${label}:${name}`);
          return (fn as (...a: unknown[]) => unknown)(...args);
        },
      ]),
    ) as Partial<Activities>;
    return { ...recorded, ...launch };
  }

  /** When did a lost attempt of each `lostOnce` activity begin, and when did the next attempt. */
  readonly lost: Record<string, { at: number; retriedAt?: number }> = {};

  private losingFirstAttempts(all: Partial<Activities>): Partial<Activities> {
    const losing = Object.entries(all).map(([name, fn]) => {
      if (!this.options.lostOnce.includes(name as keyof Activities)) return [name, fn];
      const once = async (...args: unknown[]) => {
        const seen = this.lost[name];
        if (!seen) {
          this.lost[name] = { at: Date.now() };
          this.calls.push(`lost:${name}`);
          // as a dead worker: no answer, no heartbeat; only the worker's shutdown ends it here
          await Context.current().cancelled;
        }
        if (seen && seen.retriedAt === undefined) seen.retriedAt = Date.now();
        return (fn as (...a: unknown[]) => unknown)(...args);
      };
      return [name, once];
    });
    return Object.fromEntries(losing) as Partial<Activities>;
  }

  private modelActivities(): Partial<Activities> {
    return {
      registerRun: async (input: { pageSize: number }): Promise<RunOpening> => {
        this.calls.push('registerRun');
        const rowsPlanned = this.options.rowsPlanned > 0 ? { rowsPlanned: this.options.rowsPlanned } : {};
        return { partitionsTotal: this.partitions.length, ...rowsPlanned, firstPage: this.page(0, input.pageSize) };
      },
      nextPartitions: async (input) => {
        this.calls.push(`nextPartitions:${input.fromOrdinal}`);
        return this.page(input.fromOrdinal, input.limit);
      },
      syncRunControl: async (input: SyncRunControlInput) => {
        this.calls.push(`syncRunControl:${input.version}`);
        // the ledger accepts only a newer version: a retried or stale sync changes nothing
        if (input.version > this.version) {
          this.version = input.version;
          this.paused = input.paused;
          this.cancelRequested = input.cancelRequested;
        }
        for (const e of input.events) if (!this.events.some((x) => x.key === e.key)) this.events.push(e);
        return this.status();
      },
      pickCanary: async (input) => {
        this.calls.push('pickCanary');
        // spread over the plan as the real pick is: first, last, and evenly between
        const n = Number(input.count);
        const total = this.partitions.length;
        const ordinals = [...new Set(Array.from({ length: n }, (_, i) => (n === 1 ? 0 : Math.round((i * (total - 1)) / (n - 1)))))];
        return ordinals.map((o) => ({ id: partitionId(o), ordinal: o }));
      },
      checkCanary: async () => {
        this.calls.push('checkCanary');
        return this.verdicts.canary ?? PASSED;
      },
      checkStage: async (input) => {
        this.calls.push(`checkStage:${input.stage}:${input.fromOrdinal}-${input.toOrdinal}`);
        return this.verdicts.stages?.[input.stage] ?? PASSED;
      },
      checkFinalLane: async (input) => {
        this.calls.push(`checkFinalLane:${input.lane}/${input.of}`);
        return { gates: {}, failures: [], failureCount: 0, partitionsChecked: 0 };
      },
      checkFinal: async () => {
        this.calls.push('checkFinal');
        if (this.misroutedChecks > 0) {
          // a worker whose variable reaches another database took it (its attempts spent, as the real ones can be)
          this.misroutedChecks--;
          throw ApplicationFailure.nonRetryable('run is not in the ledger of the database this worker reaches', FailureType.WrongDatabase);
        }
        const v = this.verdicts.final ?? PASSED;
        if (v instanceof Error) throw ApplicationFailure.nonRetryable(v.message);
        return v;
      },
      captureDistributions: async () => (this.calls.push('captureDistributions'), 0),
      processPartition: async (input): Promise<PartitionReport> => {
        const p = this.partition(input.partitionId);
        // as the ledger's startAttempt: a partition that finished stays finished, and its report is returned again
        if (p.status === 'succeeded' || p.status === 'cancelled') {
          this.calls.push(`revisit:${p.id}`);
          return this.report(p);
        }
        this.calls.push(`processPartition:${p.id}`);
        if (!Context.current().info.isLocal) this.activityAttempts++;
        p.processed++;
        p.status = 'running';
        this.inFlightNow++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlightNow);
        try {
          // a paused run's partitions wait at a chunk boundary; a cancel stops them there. They
          // heartbeat and end when cancelled, as the real ones do: a worker shutting down after a
          // failed assertion must not wait for a pause nobody will lift
          const activity = Context.current();
          // a local attempt has no heartbeat (Temporal watches its workflow task); the real one sends none
          const beat = () => void (activity.info.isLocal || activity.heartbeat());
          while (this.paused && !this.cancelRequested && !activity.cancellationSignal.aborted) {
            beat();
            await sleep(20);
          }
          if (activity.cancellationSignal.aborted) throw activity.cancellationSignal.reason;
          if (this.cancelRequested) {
            p.status = 'cancelled';
            return this.report(p);
          }
          if (this.options.stuck.includes(p.id)) {
            while (!activity.cancellationSignal.aborted) {
              beat();
              await sleep(50);
            }
            return this.report(p);
          }
          this.worked++;
          await sleep(this.options.processMs);
          if (this.options.failing.includes(p.id)) throw ApplicationFailure.nonRetryable(`partition ${p.id}: a data error`, FailureType.DataError);
          p.status = 'succeeded';
          return this.report(p);
        } finally {
          this.inFlightNow--;
        }
      },
      recordPartitionFailure: async (input) => {
        const p = this.partition(input.partitionId);
        p.status = 'failed';
        return { ...this.report(p), error: input.message };
      },
      reconcilePartitions: async (input) => {
        const reports: PartitionReport[] = [];
        for (const id of input.partitionIds) {
          // which workflow the run asked about: the partition's own, or its group's
          this.calls.push(`reconcileAsked:${id}:${input.groups?.[id] ?? 'own'}`);
          if (!(await this.workflowClosed(id))) continue;
          this.calls.push(`reconciled:${id}`);
          const p = this.partition(id);
          if (p.status === 'running' || p.status === 'pending') p.status = 'failed';
          reports.push({ ...this.report(p), error: 'its workflow closed without reporting' });
        }
        return reports;
      },
      finalizeRun: async (input): Promise<FinalizeRunResult> => {
        this.calls.push(input.checkError ? `finalizeRun:${input.checkError}` : 'finalizeRun');
        const byStatus = { pending: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0, reverted: 0 };
        for (const p of this.partitions) byStatus[p.status]++;
        const rowsWritten = byStatus.succeeded * this.options.rows;
        const failed = byStatus.failed > 0 || input.checkError !== undefined;
        const status: RunStatus = this.cancelRequested ? 'cancelled' : failed ? 'failed' : 'succeeded';
        return {
          status,
          byStatus,
          total: this.partitions.length,
          rowsRead: rowsWritten,
          rowsWritten,
          rowsUnchanged: 0,
          concurrentRetries: 0,
          cutWhileRunning: 0,
        };
      },
      runAfterActions: async () => (this.calls.push('runAfterActions'), { downstream: 'succeeded' as const }),
      cleanupRun: async () => (this.calls.push('cleanupRun'), { cleaned: true }),
    };
  }
}
