/**
 * What a fleet workflow is given and returns (docs/fleets.md), and how it makes each member's
 * run input. Workflow-safe plain data, shared by the workflow, the client that starts it and the
 * activity that records a member's fleet in its ledger.
 */
import type { Spec } from '../../specs/schema';
import type { FrozenTransform } from '../../specs/load';
import type { BackfillRunInput, RetryRunInput, RunApproval, RunResult } from '../run/input';
import type { FleetRecord } from './record';

export type { FleetMembership, FleetRecord } from './record';

/** One member as the fleet starts it: its variable (never its URL), its wave, its run. */
export interface FleetMemberPlan {
  variable: string;
  wave: number;
  runId: string;
  /** The database it reached when the fleet was started (db/identity.ts): its run is pinned to it. */
  databaseIdentity: string;
  /** Its workers' queue (domain/ids.ts databaseTaskQueue): its activities run only next to its database. */
  databaseQueue: string;
  specHash: string;
  /** Its limits: the spec's, with its `fleet.members` override applied. */
  limits: Spec['limits'];
  /** A later attempt of the fleet (`retry-failed`): this member's run is retried, re-running only its failed partitions. */
  retry?: { attempt: number; actor: string; reason?: string };
  /** A later attempt: the member succeeded in an earlier one and is not started again. */
  succeeded?: RunResult;
  /** `start --plan`: the member's part of the approved fleet plan, checked again when its run registers. */
  approval?: RunApproval;
}

export interface FleetWorkflowInput {
  record: FleetRecord;
  /** The spec every member runs, but for its `database` and `limits`. */
  spec: Spec;
  specFile?: string;
  transform: FrozenTransform;
  members: FleetMemberPlan[];
  /** 1 for the first; `retry-failed` of the fleet starts the next under the same workflow id. */
  attempt?: number;
  /** Test knobs, passed on to every member run. */
  partitionHeartbeatTimeoutMs?: number;
  reconcileIntervalMs?: number;
}

export type MemberStatus = 'waiting' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'not-started';

export interface MemberOutcome {
  variable: string;
  wave: number;
  runId: string;
  workflowId: string;
  status: MemberStatus;
  result?: RunResult;
  /** Why it failed, when it failed without a run result (refused at registration, say). */
  error?: string;
}

export type FleetStatus = 'running' | 'paused' | 'awaiting-approval' | 'cancelling' | 'succeeded' | 'failed' | 'cancelled';

export interface FleetResult {
  fleetId: string;
  status: FleetStatus;
  members: MemberOutcome[];
  rowsWritten: number;
}

/** The run a member is: exactly a single-database run of its own spec, which also records its fleet; or the retry of that run. */
export function memberRunInput(fleet: FleetWorkflowInput, m: FleetMemberPlan, waveApprovedBy?: string): BackfillRunInput | RetryRunInput {
  const base = {
    runId: m.runId,
    spec: { ...fleet.spec, database: m.variable, limits: m.limits },
    ...(fleet.specFile ? { specFile: fleet.specFile } : {}),
    specHash: m.specHash,
    transform: fleet.transform,
    startedBy: fleet.record.startedBy,
    databaseIdentity: m.databaseIdentity,
    databaseQueue: m.databaseQueue,
    ...(fleet.partitionHeartbeatTimeoutMs !== undefined ? { partitionHeartbeatTimeoutMs: fleet.partitionHeartbeatTimeoutMs } : {}),
    ...(fleet.reconcileIntervalMs !== undefined ? { reconcileIntervalMs: fleet.reconcileIntervalMs } : {}),
  };
  if (m.retry) return { kind: 'retry', ...base, ...m.retry };
  return {
    kind: 'run',
    ...base,
    ...(m.approval ? { approval: m.approval } : {}),
    fleet: { record: fleet.record, member: m.variable, wave: m.wave, ...(waveApprovedBy ? { waveApprovedBy } : {}) },
  };
}
