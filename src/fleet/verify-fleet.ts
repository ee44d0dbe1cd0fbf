/**
 * `verify` of a fleet: every member's run verified exactly as `verify` verifies a run — its
 * frozen transform recomputed from its own database and compared with its target now — or one
 * member (`--member`). Clean only when every member that ran was verified here and is clean: a
 * member whose database this machine cannot reach is named, never taken as clean. Reads; writes
 * nothing.
 */
import type { Client } from '@temporalio/client';
import { createPool } from '../db/pool';
import { UsageError } from '../domain/usage-error';
import { getRun, ledgerExists } from '../ledger/runs';
import { verifyRun, type VerifyOptions, type VerifyReport } from '../operations/verify-run';
import { fleetStatus } from './fleet-status';

export interface FleetMemberVerify {
  variable: string;
  runId: string;
  report?: VerifyReport;
  /** Why it was not verified: it never ran (not counted against the fleet), or its ledger is out of reach here (counted). */
  notVerified?: { reason: string; counts: boolean };
}

export interface FleetVerifyReport {
  fleetId: string;
  name: string;
  clean: boolean;
  members: FleetMemberVerify[];
}

export interface FleetVerifyOptions {
  member?: string;
  /** The ledger read first once Temporal has forgotten the fleet (fleet-from-ledgers.ts). */
  ledgerVariable?: string;
  env?: Record<string, string | undefined>;
  onPartition?: (member: string) => VerifyOptions['onPartition'];
}

export async function verifyFleet(client: Client, ref: string, options: FleetVerifyOptions = {}): Promise<FleetVerifyReport> {
  const env = options.env ?? process.env;
  const fleet = await fleetStatus(client, ref, env, options.ledgerVariable);
  const chosen = options.member ? fleet.members.filter((m) => m.variable === options.member) : fleet.members;
  if (options.member && chosen.length === 0)
    throw new UsageError(`--member ${options.member}: not a member of fleet ${fleet.fleetId} (members: ${fleet.members.map((m) => m.variable).join(', ')})`);
  const members: FleetMemberVerify[] = [];
  // one member at a time: each recomputes its whole run against its own database
  for (const m of chosen) {
    const base = { variable: m.variable, runId: m.runId };
    if (m.status === 'waiting' || (m.status === 'not-started' && !m.unread)) {
      members.push({ ...base, notVerified: { reason: 'its run never started', counts: false } });
      continue;
    }
    const url = env[m.variable];
    if (!url || !m.runId) {
      members.push({ ...base, notVerified: { reason: m.unread ?? `${m.variable} is not set here`, counts: true } });
      continue;
    }
    members.push({ ...base, ...(await verifyMember(url, m.variable, m.runId, options.onPartition?.(m.variable))) });
  }
  const clean = members.every((m) => (m.report ? m.report.clean : !m.notVerified!.counts));
  return { fleetId: fleet.fleetId, name: fleet.name, clean, members };
}

async function verifyMember(url: string, variable: string, runId: string, onPartition: VerifyOptions['onPartition']): Promise<Partial<FleetMemberVerify>> {
  const pool = createPool(url, { max: 4, applicationName: 'backfill-cli' });
  try {
    const run = (await ledgerExists(pool)) ? await getRun(pool, runId) : undefined;
    if (!run) return { notVerified: { reason: `its ledger in ${variable} holds no run ${runId}`, counts: true } };
    return { report: await verifyRun(pool, run, onPartition ? { onPartition } : {}) };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    return { notVerified: { reason: `could not be verified from here: ${(err as Error).message}`, counts: true } };
  } finally {
    await pool.end();
  }
}
