/**
 * The fleet half of the Backfill API (docs/fleets.md): one run over many databases, each call one
 * fleet operation on the client's Temporal connection, with the fleet's Web UI page where it has one.
 */
import type { Client } from '@temporalio/client';
import { defaultActor } from '../operations/actor';
import type { OperatorAction } from '../domain/types';
import { webUiUrl, type TemporalConfig } from '../temporal/config';
import { startFleet, type StartedFleet, type StartFleetOptions } from '../fleet/start-fleet';
import { fleetStatus, type FleetStatusReport } from '../fleet/fleet-status';
import { controlFleet, type FleetAction } from '../fleet/fleet-control';
import { waitForFleet } from '../fleet/fleet-result';
import { retryFleet, type FleetRetryStarted } from '../fleet/retry-fleet';
import { revertFleet, type FleetRevertOptions, type FleetRevertStarted } from '../fleet/revert-fleet';
import { verifyFleet, type FleetVerifyReport } from '../fleet/verify-fleet';
import type { FleetResult } from '../workflows/fleet/input';
import type { FleetControlOutcome } from '../workflows/fleet/messages';

/** A fleet that has started (docs/fleets.md): its id, its members' runs, its Web UI page. */
export interface StartedFleetInfo extends Omit<StartedFleet, 'handle'> {
  webUi: string;
  /** Resolves when the fleet's workflow ends, succeeded or not. */
  result(): Promise<FleetResult>;
}

/** A finished fleet's next attempt, started. */
export interface RetriedFleet extends Omit<FleetRetryStarted, 'handle'> {
  /** Resolves when the retry's workflow ends, succeeded or not. */
  result(): Promise<FleetResult>;
}

export interface BackfillFleets {
  /** A fleet spec (`databases:`): every member checked and planned, then one fleet run started; members wait for their wave. */
  startFleet(specFile: string, options?: Omit<StartFleetOptions, 'specFile'>): Promise<StartedFleetInfo>;
  /** A fleet's members (wave, status, rows, rate, ETA, what holds them) from the fleet workflow and the members' ledgers; once Temporal has forgotten it, from the ledgers, this one's first. */
  fleetStatus(fleet: string): Promise<FleetStatusReport>;
  /** Pause, resume or cancel a whole fleet, or approve its next wave; answered once the running members were told. */
  controlFleet(fleet: string, action: FleetAction, who?: Partial<OperatorAction>): Promise<FleetControlOutcome & { fleetId: string }>;
  /** The next attempt of a finished fleet: failed members retried (their failed partitions), members never started started, the rest kept. */
  retryFleet(fleet: string, who?: Partial<OperatorAction>): Promise<RetriedFleet>;
  /** Every member's run (or `member`'s) verified as `verify` verifies a run, from its own database; clean only when all that ran are. */
  verifyFleet(fleet: string, options?: { member?: string }): Promise<FleetVerifyReport>;
  /** Every member of a finished fleet undone as `revert` undoes a run; all members checked before any starts. */
  revertFleet(fleet: string, options: Omit<FleetRevertOptions, 'actor'> & { actor?: string }): Promise<FleetRevertStarted>;
}

/** What the fleet calls need of the client that holds them: its Temporal connection and settings, and its ledger's variable. */
export interface FleetSession {
  client(): Promise<Client>;
  readonly config: TemporalConfig;
  readonly databaseVar: string;
}

/** Who acts, for the audit record: the OS user unless named. */
export function operatorOf(who: Partial<OperatorAction> = {}): OperatorAction {
  return { actor: who.actor ?? defaultActor(), ...(who.reason ? { reason: who.reason } : {}) };
}

export function fleetCalls(s: FleetSession): BackfillFleets {
  const webUi = (workflowId: string) => webUiUrl(s.config.address, s.config.namespace, workflowId);
  const starter = async () => ({ client: await s.client(), taskQueue: s.config.taskQueue });
  return {
    async startFleet(specFile, options = {}) {
      const { handle, ...started } = await startFleet(await starter(), { specFile, ...options });
      return { ...started, webUi: webUi(started.workflowId), result: () => waitForFleet(handle) };
    },
    async fleetStatus(fleet) {
      const report = await fleetStatus(await s.client(), fleet, process.env, s.databaseVar);
      return report.readFrom ? report : { ...report, webUi: webUi(report.workflowId) };
    },
    async controlFleet(fleet, action, who) {
      return controlFleet(await s.client(), fleet, action, operatorOf(who));
    },
    async retryFleet(fleet, who) {
      const { handle, ...started } = await retryFleet(await starter(), fleet, operatorOf(who));
      return { ...started, result: () => waitForFleet(handle) };
    },
    async verifyFleet(fleet, options = {}) {
      return verifyFleet(await s.client(), fleet, { ...options, ledgerVariable: s.databaseVar });
    },
    async revertFleet(fleet, options) {
      return revertFleet(await starter(), fleet, { ...options, actor: options.actor ?? defaultActor() });
    },
  };
}
