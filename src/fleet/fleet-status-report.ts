/**
 * What `status` of a fleet reports, and the parts both of its sources share: a member's own
 * ledger read as `status` reads a run's, and the totals over the members. The fleet's workflow
 * (fleet-status.ts) or, once Temporal has forgotten the fleet, its members' ledgers
 * (fleet-from-ledgers.ts) fill it in.
 */
import type { WorkerGap } from '../domain/types';
import { createPool } from '../db/pool';
import { getRun, ledgerExists } from '../ledger/runs';
import { statusReport, type StatusReport } from '../operations/status';
import type { FleetStatus, MemberStatus } from '../workflows/fleet/input';
import type { FleetEvent } from '../workflows/fleet/fleet-state';

/** Said wherever a fleet read from its members' ledgers is shown. */
export const LEDGERS_ONLY =
  "read from its members' ledgers: Temporal no longer knows this fleet (past its retention); fleet-level pauses and events were kept only in its workflow";

export interface FleetMemberStatus {
  variable: string;
  wave: number;
  runId: string;
  workflowId: string;
  /** The fleet's view: waiting for its wave, running, finished, or never started. */
  status: MemberStatus;
  /** Why it failed without a run (refused at registration, say). */
  error?: string;
  /** Its ledger's status, when its variable is set here and its run registered. */
  run?: Pick<StatusReport, 'status' | 'paused' | 'totals' | 'eta' | 'holding' | 'failures' | 'lastError' | 'canaryHold'>;
  /** Set while no worker serves its database: its run waits for one. */
  waitingForWorker?: WorkerGap;
  /** Set when its ledger could not be read from here (variable unset, database unreachable). */
  unread?: string;
  /** Its database did not answer: its run holds (its activities retry) until it does. */
  unreachable?: true;
}

export interface FleetStatusReport {
  fleetId: string;
  name: string;
  reason: string;
  workflowId: string;
  /** `unknown`: read from the ledgers (`readFrom`), some of which could not be read here. */
  status: FleetStatus | 'unknown';
  startedBy: string;
  wave: number;
  waves: number;
  concurrency: number;
  onError: 'stop' | 'continue';
  awaitingApproval?: number;
  paused?: { actor: string; reason?: string };
  cancelRequested?: { actor: string; reason?: string };
  stopping?: string;
  approvals: { wave: number; actor: string; reason?: string }[];
  excluded: { variable: string; reason: string }[];
  members: FleetMemberStatus[];
  totals: {
    members: number;
    byStatus: Record<MemberStatus, number>;
    rowsRead: number;
    rowsWritten: number;
    partitions: number;
    partitionsDone: number;
    rowsPerSecond: number;
  };
  events: FleetEvent[];
  webUi?: string;
  /** `ledgers`: Temporal no longer knows the fleet; its record and members were read from the members' ledgers (fleet-from-ledgers.ts). */
  readFrom?: 'ledgers';
  /** `start --plan --approved-by`: who approved the fleet's plan. */
  approvedBy?: string;
}

export function fleetTotals(members: FleetMemberStatus[]): FleetStatusReport['totals'] {
  const byStatus: Record<MemberStatus, number> = { waiting: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0, 'not-started': 0 };
  for (const m of members) byStatus[m.status]++;
  const sum = (f: (m: FleetMemberStatus) => number) => members.reduce((n, m) => n + f(m), 0);
  return {
    members: members.length,
    byStatus,
    rowsRead: sum((m) => m.run?.totals.rowsRead ?? 0),
    rowsWritten: sum((m) => m.run?.totals.rowsWritten ?? 0),
    partitions: sum((m) => m.run?.totals.total ?? 0),
    partitionsDone: sum((m) => (m.run ? m.run.totals.byStatus.succeeded + m.run.totals.byStatus.failed + m.run.totals.byStatus.cancelled : 0)),
    rowsPerSecond: sum((m) => m.run?.eta?.rowsPerSecond ?? 0),
  };
}

export async function memberRun(variable: string, runId: string, env: Record<string, string | undefined>): Promise<Partial<FleetMemberStatus>> {
  const url = env[variable];
  if (!url) return { unread: `${variable} is not set here` };
  const pool = createPool(url, { max: 1, applicationName: 'backfill-cli' });
  try {
    if (!(await ledgerExists(pool))) return {};
    const row = await getRun(pool, runId);
    if (!row) return {};
    const r = await statusReport(pool, row);
    return {
      run: {
        status: r.status,
        paused: r.paused,
        totals: r.totals,
        eta: r.eta,
        holding: r.holding,
        failures: r.failures,
        lastError: r.lastError,
        ...(r.canaryHold ? { canaryHold: r.canaryHold } : {}),
      },
    };
  } catch (err) {
    // the member's run holds until it answers again (its activities retry); the fleet goes on
    return { unreachable: true, unread: `${variable}'s database cannot be reached from here (${(err as Error).message}); its run holds until it answers` };
  } finally {
    await pool.end();
  }
}
