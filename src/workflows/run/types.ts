/** What a run workflow is given and what it returns; shared by the workflow, its phases and the client. */
import type { RunStatus } from '../../shared/statuses';
import type { FrozenTransform } from '../../specs/load';
import type { RunApproval } from '../../activities/register-run';
import type { Spec } from '../../specs/schema';
import type { RunState } from '../run-state';

export interface RunWorkflowInput {
  runId: string;
  spec: Spec;
  specFile?: string;
  specHash: string;
  transform: FrozenTransform;
  startedBy: string;
  /** The database the run was planned against (src/db/identity.ts): only workers connected to it register the run. */
  databaseIdentity?: string;
  /**
   * The task queue of the workers connected to that database (shared/ids.ts databaseTaskQueue):
   * the run's partitions and every activity it calls go there, while the run workflow stays on
   * the common queue. Absent in runs started before routing: everything on the run's own queue.
   */
  databaseQueue?: string;
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
  /**
   * A revert run (docs/undo.md): the run it undoes and, with `--partition`, which of its
   * partitions. Its chunks restore before-images and verify every row they restore, so the
   * backfill's whole-run check (which recomputes the transform) does not apply.
   */
  revert?: { of: string; partitions?: string[]; reason: string };
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

/** The run workflow's signature, for continue-as-new without importing the workflow itself. */
export type RunWorkflow = (input: RunWorkflowInput) => Promise<RunResult>;
