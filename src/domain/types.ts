/**
 * Glossary and plain data shared by workflows, activities and the CLI. Workflow-safe:
 * nothing here touches Node, the network or the clock.
 *
 * - run: one execution of a spec; id `runId`, workflow id `backfill/<name>/<runId>`.
 * - partition: a bounded slice of the source (a key range, a time interval or a list
 *   value); its id is derived from its bounds, so the same spec and data give the same ids.
 * - chunk: a keyset range of `source.key` (one column or several) inside a partition,
 *   (cursor, hi] — of (partition column, key…) for time partitions (RunShape.chunkOrder); its
 *   write and the partition's checkpoint commit in one transaction.
 * - cursor: the last `source.key` value a partition has committed, as text; a JSON array of
 *   the values' text when chunks walk more than one column; null = none yet.
 * - ledger: the `backfill` schema in the target database; the audit record and the truth
 *   about cursors and counts.
 */
import type { RunStatus, PartitionStatus } from './statuses';
import type { AllowedWindow } from './window';
import type { GuardsSpec } from './guards';

/** A partition's bounds: what the plan cut, and the stretch of keys a split while running left it. */
export type PartitionBounds = PlanBounds & {
  /**
   * Set on a partition split while it ran (`limits.splitTail`): only its rows whose walk key (the
   * cursor's columns, in the cursor's form) is after `after` and through `through`; null is open.
   * Row data, like a span's bounds: in the ledger, never in ids.
   */
  stretch?: KeyStretch;
};

type PlanBounds =
  /** Integers in [lo, hi), as decimal strings so bigint columns stay exact. */
  | { kind: 'range'; column: string; lo: string; hi: string }
  /**
   * Timestamps in [lo, hi), ISO-8601 in UTC. `timeZone` (IANA; absent = UTC) is the calendar
   * the bounds were cut in; a `date` or `timestamp` column's values are that zone's local time.
   */
  | { kind: 'time'; column: string; lo: string; hi: string; timeZone?: string }
  /**
   * Values of any orderable type in [lo, hi), as the column's text, null for an open end:
   * ranges of about equal rows cut from the column's quantiles (`by: range` with `count`).
   * Row data, like list values: kept in the ledger, never in ids or messages.
   */
  | { kind: 'span'; column: string; lo: string | null; hi: string | null }
  /** One value of the column, as text. */
  | { kind: 'list'; column: string; value: string }
  /**
   * One leaf partition of a partitioned source: `leaf` its qualified name, `constraint` its
   * partition constraint as PostgreSQL deparses it (pg_get_partition_constraintdef, naming the
   * partition key's column unqualified), which lets the planner prune to that leaf.
   */
  | { kind: 'leaf'; column: string; leaf: string; constraint: string; split?: LeafSplit }
  /** Rows whose partition column is NULL: planned so no source row silently falls outside every partition. */
  | { kind: 'null'; column: string };

/** A stretch (after, through] of a partition's walk keys: where a split cut a running partition. */
export interface KeyStretch {
  after: string | null;
  through: string | null;
}

/**
 * One of the ranges a big leaf is cut into (`partition.rows`): [lo, hi) of the source key's
 * first column, open at the leaf's ends, of about equal rows. `piece` numbers it within its
 * leaf from 1. Its values are row data, like a span's: in the ledger, never in ids.
 */
export interface LeafSplit {
  column: string;
  lo: string | null;
  hi: string | null;
  piece: number;
}

export interface PlannedPartition {
  id: string;
  ordinal: number;
  bounds: PartitionBounds;
}

export interface Limits {
  chunkSize: number;
  concurrency: number;
  rowsPerSecond?: number;
  window?: AllowedWindow;
  targetChunkSeconds?: number;
  minChunkSize?: number;
  maxChunkSize?: number;
  statementTimeoutSeconds?: number;
  flushEveryChunk?: boolean;
  splitTail?: boolean;
  guards?: GuardsSpec;
}

/** A change of limits on a running run; omitted fields keep their value, rowsPerSecond: null removes the cap. */
export interface LimitsChange extends OperatorAction {
  concurrency?: number;
  chunkSize?: number;
  rowsPerSecond?: number | null;
  /** null removes the window (all hours allowed). */
  window?: AllowedWindow | null;
  /** null turns adaptive chunk sizing off. */
  targetChunkSeconds?: number | null;
  /** Replaces all guards; null removes them. */
  guards?: GuardsSpec | null;
}

/** Counts a partition reports; sums of these per run are what `status` shows. */
export interface RowCounts {
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
  /** Update mode: output rows whose key the target lacks, so nothing was written for them. */
  rowsSkipped?: number;
}

/** What a partition's workflow is started with (workflows/backfill-partition.ts), by the run. */
export interface PartitionWorkflowInput {
  database: string;
  runId: string;
  partitionId: string;
  runWorkflowId: string;
  /** How quickly a dead worker is noticed and the partition retried elsewhere. */
  heartbeatTimeoutMs?: number;
  /** Its first attempt runs as a local activity (backfill-partition.ts); partitions started before that was so lack it. */
  localFirst?: boolean;
  /** How long that local attempt runs before it hands over, when not the default (a test knob). */
  localBudgetMs?: number;
}

/** Small partitions run by one workflow (backfill-partition.ts), each with its own attempt in the ledger. */
export interface PartitionGroupInput {
  members: PartitionWorkflowInput[];
  /** Its finished members' reports go from a local activity, not a workflow command; groups started before that was so lack it. */
  reportsLocally?: boolean;
}

export interface PartitionReport extends RowCounts {
  partitionId: string;
  status: PartitionStatus;
  chunks: number;
  error?: string;
  /** A guard held the partition past holdTimeoutSeconds: the run should pause for an operator. */
  pauseRequest?: PauseRequest;
  /** The activity already signalled this outcome to the run: the partition workflow need not. */
  reported?: boolean;
  /** The run attempt the partition ran in (the ledger's run_attempt); absent in reports of workers before it. */
  runAttempt?: number;
  /**
   * The partition's local attempt stopped in good order, still running: its time was up, or it
   * would have to wait. Its activity carries on from the checkpoint (process-partition.ts).
   */
  handedOver?: boolean;
}

/**
 * What a running partition is doing right now, as its worker sees it. One union for the
 * heartbeat, the ledger's hold reason, the run's progress and the Web UI.
 */
export const PartitionState = {
  /** Writing chunks as fast as its limits allow. */
  Writing: 'writing',
  /** Its run is paused by an operator (or by a guard's hold timeout). */
  Paused: 'paused',
  /** Waiting for the run's shared rows/s budget: normal pacing, not a condition. */
  Throttled: 'throttled',
  /** Outside the allowed hours; continues by itself when the window opens. */
  OutsideWindow: 'outside-window',
  /** A hard guard reading, or a lock it would queue behind, keeps it from writing. */
  Held: 'held',
  /** A soft guard reading: it writes one at a time with its run, and less of the time. */
  Slowed: 'slowed',
} as const;
export type PartitionState = (typeof PartitionState)[keyof typeof PartitionState];

/**
 * The states a partition tells its run about (signals are history events, so only these):
 * the run knows about its own pause, and waiting for the rows/s budget is normal pacing.
 */
export const REPORTED_PARTITION_STATES: readonly PartitionState[] = [
  PartitionState.Writing,
  PartitionState.Slowed,
  PartitionState.Held,
  PartitionState.OutsideWindow,
];

/**
 * What is keeping a running partition from writing at full speed, as its worker last saw it:
 * a health guard slowing or holding it, the allowed-hours window, or a lock it would queue
 * behind. `state: 'writing'` clears it. Sent to the run on change only.
 */
export interface PartitionCondition {
  partitionId: string;
  state: PartitionState;
  /** e.g. "held by probeMs 312.40 > hard 200"; null while writing. */
  reason: string | null;
  /** When the worker entered this state (ISO-8601). */
  since: string;
}

/** Who did something and why: recorded with every control action in backfill.run_events. */
export interface OperatorAction {
  actor: string;
  reason?: string;
}

/**
 * A pause the engine asks for (a guard held too long, a full disk, a changed input), with the
 * control version it decided on: a request decided before a later operator action (a resume)
 * is stale and ignored; the condition, if it persists, asks again.
 */
export interface PauseRequest extends OperatorAction {
  basedOnVersion?: number;
}

/** An operator's cancel; `thenTemporalCancel`: the caller follows it with Temporal's cancellation, so the execution ends Canceled. */
export interface CancelRequest extends OperatorAction {
  thenTemporalCancel?: boolean;
}

/** What a pause, resume or cancel update answers once the ledger holds the change. */
export interface ControlOutcome {
  status: string;
  paused: boolean;
  cancelRequested: boolean;
}

/** No worker has polled the run's database queue for a while: its work waits for one (nothing fails). */
export interface WorkerGap {
  /** The spec's database variable. */
  database: string;
  queue: string;
  /** When a worker last polled the queue, if Temporal still remembers (ISO). */
  since: string | null;
}

export interface RunProgress {
  runId: string;
  name: string;
  status: RunStatus;
  paused: boolean;
  cancelRequested: boolean;
  partitions: { total: number; pending: number; running: number; succeeded: number; failed: number; cancelled: number };
  /** Counts of finished partitions; running partitions' counts are in the ledger. */
  finished: RowCounts;
  limits: Limits;
  startedAt: string;
  /** Partitions per minute over the run so far; null before the first one finishes. */
  partitionsPerMinute: number | null;
  /** Rows read per second by finished partitions, over the run so far. */
  rowsPerSecond: number | null;
  etaSeconds: number | null;
  continuedAsNew: number;
  /** Who paused or is cancelling the run, and why. */
  heldBy?: OperatorAction;
  /** Set while no worker serves the run's database queue (run/worker-watch.ts). */
  workerGap?: WorkerGap;
  /** The most recent partition failure: partition id and message. */
  lastError?: string;
  /** Running partitions that are slowed or held, and why (guards, window, locks). */
  conditions: PartitionCondition[];
  /** The canary (spec validate.canary), when the run has one. */
  canary?: CanaryProgress;
  /** Ramp stages (validate.ramp): which one runs (1-based, of `stages`), and why it holds. */
  ramp?: { stage: number; stages: number; phase: 'running' | 'held'; held?: string };
  /** The whole-run check, once it ran. */
  finalCheck?: { passed: boolean; failures: string[]; failureCount: number; partitionsChecked: number; incomplete?: boolean };
}

export interface CanaryProgress {
  partitions: string[];
  /** running: its partitions write; held: failed, or passed and waiting for approval; passed / approved: the run expanded. */
  phase: 'running' | 'held' | 'passed' | 'approved';
  /** Why it holds, and what to do. */
  held?: string;
  /** What failed, without row data. */
  failures?: string[];
  approvedBy?: OperatorAction;
}
