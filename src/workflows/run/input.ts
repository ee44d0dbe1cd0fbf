/** What a run workflow is given and what it returns; shared by the workflow, its phases and the client. */
import type { RunStatus } from '../../domain/statuses';
import type { FrozenTransform } from '../../specs/load';
import type { SavedPlan } from '../../preflight/saved-plan';
import type { Spec } from '../../specs/schema';
import type { RunState } from '../run-state';
import type { FleetMembership } from '../fleet/record';
import type { SubsetRequest } from '../../compiler/subset';

/** `start --plan`: the saved plan a run must match when it registers, and who approved it. */
export interface RunApproval {
  plan: SavedPlan;
  approvedBy: string;
}

/** What every execution of a run is given, whichever kind it is. */
interface RunInputBase {
  runId: string;
  spec: Spec;
  specHash: string;
  transform: FrozenTransform;
  startedBy: string;
  /** The database the run was planned against (src/db/identity.ts): only workers connected to it register the run. */
  databaseIdentity?: string;
  /**
   * The task queue of the workers connected to that database (domain/ids.ts databaseTaskQueue):
   * the run's partitions and every activity it calls go there, while the run workflow stays on
   * the common queue. Absent in runs started before routing: everything on the run's own queue.
   */
  databaseQueue?: string;
  /** Continue-as-new after this many history events even if the server has not suggested it yet. */
  maxHistoryEvents?: number;
  partitionHeartbeatTimeoutMs?: number;
  /** Test knob: how long a partition's local attempt runs before it hands over (default 2 s, backfill-partition.ts). */
  partitionLocalBudgetMs?: number;
  /** Bench knob: every partition a workflow of its own, never in groups (bench/estimate-year.ts measures groups against it). */
  partitionsAlone?: boolean;
  /** How often the run looks for partition workflows that closed without reporting (default 5 minutes). */
  reconcileIntervalMs?: number;
  /** Test knob: how often the run's notifier reads its ledger (default 15 s). */
  notifyPollMs?: number;
  /** Carried across continue-as-new; absent on the first execution. */
  state?: RunState;
}

/** A backfill: `backfill start`. */
export interface BackfillRunInput extends RunInputBase {
  kind: 'run';
  specFile?: string;
  /** `start --plan`: the approved plan the run must match when it registers, and the approver. */
  approval?: RunApproval;
  /** `start --only-stale`: the run covers only the spec's stale partitions. */
  onlyStale?: boolean;
  /** `start --partition`, `--from/--to`: the run covers only these partitions of the plan (compiler/subset.ts). */
  subset?: SubsetRequest;
  /** A member of a fleet (docs/fleets.md): the fleet's record, kept in this member's ledger. */
  fleet?: FleetMembership;
}

/** `retry-failed`: a new attempt of a finished run, re-running only its failed and cancelled partitions. */
export interface RetryRunInput extends RunInputBase {
  kind: 'retry';
  specFile?: string;
  attempt: number;
  actor: string;
  reason?: string;
  /** Set when the run retried is a revert: its chunks restore images, as the first attempt's did. */
  reverts?: string;
}

/**
 * A revert run (docs/undo.md): the run it undoes and, with `--partition`, which of its
 * partitions. Its chunks restore before-images and verify every row they restore, so the
 * backfill's whole-run check (which recomputes the transform) does not apply.
 */
export interface RevertRunInput extends RunInputBase {
  kind: 'revert';
  reverts: string;
  partitions?: string[];
  reason: string;
}

export type RunWorkflowInput = BackfillRunInput | RetryRunInput | RevertRunInput;

/** The run restores before-images instead of computing the transform: a revert, or a retry of one. */
export function restoresImages(input: RunWorkflowInput): boolean {
  return input.kind === 'revert' || (input.kind === 'retry' && input.reverts !== undefined);
}

/**
 * The input as runs started before the kinds were written recorded it (a bag of optional
 * `retry` and `revert`): their histories must still replay, and such a run may be in flight
 * across an upgrade. Read once, at the top of the workflow.
 */
export type RecordedRunInput =
  | RunWorkflowInput
  | (Omit<RunInputBase, never> & {
      kind?: undefined;
      specFile?: string;
      approval?: RunApproval;
      onlyStale?: boolean;
      retry?: { attempt: number; actor: string; reason?: string };
      revert?: { of: string; partitions?: string[]; reason: string };
    });

export function runInputOf(recorded: RecordedRunInput): RunWorkflowInput {
  if (recorded.kind !== undefined) return recorded;
  const { retry, revert, approval, onlyStale, specFile, ...base } = recorded;
  if (retry) return { ...base, kind: 'retry', specFile, ...retry, ...(revert ? { reverts: revert.of } : {}) };
  if (revert) return { ...base, kind: 'revert', reverts: revert.of, reason: revert.reason, ...(revert.partitions ? { partitions: revert.partitions } : {}) };
  return { ...base, kind: 'run', specFile, ...(approval ? { approval } : {}), ...(onlyStale ? { onlyStale } : {}) };
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

/** The run workflow's signature, for continue-as-new without importing the workflow itself. */
export type RunWorkflow = (input: RecordedRunInput) => Promise<RunResult>;
