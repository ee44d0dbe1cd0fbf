/**
 * `report` of a fleet, for reviewers: the fleet's record and outcome (members, waves, who started,
 * approved, paused, excluded and why), then each member's own report — the same report a run has,
 * from its own ledger — for every member whose variable is set here. Reads; writes nothing.
 */
import type { Client } from '@temporalio/client';
import { createPool, databaseUrlFrom } from '../db/pool';
import { getRun, ledgerExists } from '../ledger/runs';
import { collectReport, type ReportData } from '../report/collect';
import { inParallel } from '../util/in-parallel';
import { fleetStatus, type FleetStatusReport } from './fleet-status';

export interface FleetReportData {
  fleet: FleetStatusReport;
  /** Each member's run report, in the fleet's order; absent for members that never ran or whose ledger cannot be read here. */
  members: { variable: string; report?: ReportData; unread?: string }[];
}

/** `ledgerVariable`: the ledger read first once Temporal has forgotten the fleet (fleet-from-ledgers.ts). */
export async function collectFleetReport(
  client: Client,
  ref: string,
  env: Record<string, string | undefined> = process.env,
  ledgerVariable?: string,
): Promise<FleetReportData> {
  const fleet = await fleetStatus(client, ref, env, ledgerVariable);
  const members = await inParallel(fleet.members, 4, async (m) => {
    if (m.status === 'waiting' || m.status === 'not-started') return { variable: m.variable, ...(m.unread ? { unread: m.unread } : {}) };
    if (!env[m.variable]) return { variable: m.variable, unread: `${m.variable} is not set here` };
    const pool = createPool(databaseUrlFrom(m.variable, env), { max: 2, applicationName: 'backfill-cli' });
    try {
      const run = (await ledgerExists(pool)) ? await getRun(pool, m.runId) : undefined;
      return run ? { variable: m.variable, report: await collectReport(pool, run) } : { variable: m.variable };
    } catch (err) {
      return { variable: m.variable, unread: `cannot read ${m.variable}'s ledger: ${(err as Error).message}` };
    } finally {
      await pool.end();
    }
  });
  return { fleet, members };
}
