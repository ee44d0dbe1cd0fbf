/**
 * The fleet workflow's query and updates. pause, resume and cancel have the run's names, so the
 * same commands (and the Web UI's forms) address a fleet as they address a run.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { OperatorAction } from '../../domain/types';
import type { FleetRecord, FleetStatus, FleetWorkflowInput } from './input';
import type { FleetState } from './fleet-state';

export interface FleetProgress {
  record: FleetRecord;
  /** What the fleet was started with (retry-failed starts the next attempt from it). */
  input: FleetWorkflowInput;
  attempt: number;
  status: FleetStatus;
  state: FleetState;
}

export interface FleetControlOutcome {
  status: FleetStatus;
  /** The members the action was passed on to (the running ones). */
  members: string[];
}

export const fleetProgressQuery = defineQuery<FleetProgress>('fleetProgress');
export const fleetPauseUpdate = defineUpdate<FleetControlOutcome, [OperatorAction]>('pause');
export const fleetResumeUpdate = defineUpdate<FleetControlOutcome, [OperatorAction]>('resume');
export const fleetCancelUpdate = defineUpdate<FleetControlOutcome, [OperatorAction]>('cancel');
export const approveWaveUpdate = defineUpdate<FleetControlOutcome, [OperatorAction]>('approve');

export const FLEET_HANDLER_DESCRIPTIONS = {
  progress: "Every member's wave and status, the fleet's status, its approvals and its last events.",
  pause: 'Pause the fleet: no member starts, and every running member is paused. Args: {"actor": "...", "reason": "..."}',
  resume: 'Resume a paused fleet and its running members. Args: {"actor": "...", "reason": "..."}',
  cancel: 'Cancel the fleet: no member starts, running members are cancelled (committed chunks stay). Args: {"actor": "...", "reason": "..."}',
  approve: 'Let the next wave of a fleet that waits for a person start. Args: {"actor": "...", "reason": "..."}',
} as const;
