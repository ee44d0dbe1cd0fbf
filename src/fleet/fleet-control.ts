/**
 * Operating a fleet: pause, resume and cancel of the whole fleet, and the approval of its next
 * wave, as updates on the fleet workflow — refused at once with the reason when they do not
 * apply, answered once the running members have been told. One member is operated as any run is
 * (`--member NAME`: its run, in its own ledger), so the fleet is found and the member named here.
 */
import { executeUpdate } from '../temporal/update-across-continue-as-new';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { OperatorAction } from '../domain/types';
import { UsageError } from '../domain/usage-error';
import {
  approveWaveUpdate,
  fleetCancelUpdate,
  fleetPauseUpdate,
  fleetProgressQuery,
  fleetResumeUpdate,
  type FleetControlOutcome,
} from '../workflows/fleet/messages';
import { waitForFleet } from './fleet-result';
import { findFleet } from './fleet-status';

export type FleetAction = 'pause' | 'resume' | 'cancel' | 'approve';

export async function controlFleet(client: Client, ref: string, action: FleetAction, who: OperatorAction): Promise<FleetControlOutcome & { fleetId: string }> {
  const handle = await findFleet(client, ref);
  const { status } = await handle.describe();
  if (status.name !== 'RUNNING') {
    const result = await waitForFleet(handle).catch(() => undefined);
    throw new UsageError(`fleet ${ref} already finished (${result?.status ?? status.name.toLowerCase()}); there is nothing to ${action}`);
  }
  const update = { pause: fleetPauseUpdate, resume: fleetResumeUpdate, cancel: fleetCancelUpdate, approve: approveWaveUpdate }[action];
  try {
    const outcome = await executeUpdate(handle, update, who);
    return { ...outcome, fleetId: handle.workflowId.split('/')[2] };
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new UsageError(`cannot ${action} ${handle.workflowId}: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}

/** A member of a fleet by its name (its variable): the run to address, in the ledger its variable reaches. */
export async function fleetMember(client: Client, ref: string, variable: string): Promise<{ runId: string; workflowId: string; status: string }> {
  const { state } = await (await findFleet(client, ref)).query(fleetProgressQuery);
  const member = state.members.find((m) => m.variable === variable);
  if (!member) throw new UsageError(`--member ${variable}: not a member of fleet ${ref} (members: ${state.members.map((m) => m.variable).join(', ')})`);
  if (member.status === 'waiting' || member.status === 'not-started')
    throw new UsageError(`--member ${variable}: its run has not started (${member.status}); operate the fleet instead, or wait for its wave`);
  return { runId: member.runId, workflowId: member.workflowId, status: member.status };
}
