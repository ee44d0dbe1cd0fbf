/** Following a fleet to its end from the command line (start --wait, watch of a fleet): a line per member change, then its status. */
import type { BackfillClient } from '../api/backfill';
import type { FleetStatusReport } from '../fleet/fleet-status';
import { emit, format, type OutputOptions } from './output';
import { renderFleetStatus } from './render/fleet-status';

const EVERY_MS = 2_000;
const FINISHED = ['succeeded', 'failed', 'cancelled'];

export async function followFleet(backfill: BackfillClient, fleetId: string, opts: OutputOptions): Promise<void> {
  const seen = new Map<string, string>();
  let report: FleetStatusReport;
  for (;;) {
    report = await backfill.fleetStatus(fleetId);
    if (format(opts) === 'text') {
      for (const m of report.members) {
        const line = `${m.status}${m.run?.paused ? ' (paused)' : ''}${m.waitingForWorker ? ' — waiting for a worker' : ''}`;
        if (seen.get(m.variable) === line) continue;
        seen.set(m.variable, line);
        process.stderr.write(`${m.variable} (wave ${m.wave}): ${line}${m.run ? `, ${m.run.totals.rowsWritten} rows written` : ''}\n`);
      }
    }
    if (FINISHED.includes(report.status)) break;
    await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
  }
  emit(opts, report, renderFleetStatus);
  if (report.status !== 'succeeded') process.exitCode = 1;
}
