/** Text for `backfill status` of a fleet: the fleet's line, one row per member, what needs a person, the totals. */
import Table from 'cli-table3';
import { LEDGERS_ONLY, type FleetMemberStatus, type FleetStatusReport } from '../../fleet/fleet-status-report';
import { workerGapLine } from '../../operations/database-workers';
import { plainStyle } from './status';
import { count as n, duration as seconds } from './units';

export function renderFleetStatus(r: FleetStatusReport): string {
  const t = r.totals;
  const lines = [
    `Fleet ${r.name}/${r.fleetId}: ${r.status.toUpperCase()} — wave ${r.wave} of ${r.waves}, ${t.byStatus.succeeded} of ${t.members} member(s) succeeded`,
    `  ${r.reason}; started by ${r.startedBy}; ${r.concurrency} member(s) at once, onError ${r.onError}`,
  ];
  if (r.approvedBy) lines.push(`  its plan approved by ${r.approvedBy}`);
  if (r.readFrom === 'ledgers') lines.push(`  ${LEDGERS_ONLY}`);
  if (r.webUi) lines.push(`  Web UI: ${r.webUi}`);
  if (r.awaitingApproval !== undefined) lines.push(`Wave ${r.awaitingApproval} waits for a person: backfill approve ${r.fleetId} --reason "…"`);
  if (r.paused) lines.push(`Paused by ${r.paused.actor}${r.paused.reason ? ` (${r.paused.reason})` : ''}: backfill resume ${r.fleetId}`);
  if (r.stopping) lines.push(`Stopping: ${r.stopping}`);
  if (r.cancelRequested) lines.push(`Cancel requested by ${r.cancelRequested.actor}${r.cancelRequested.reason ? ` (${r.cancelRequested.reason})` : ''}`);
  const table = new Table({ style: plainStyle(), head: ['member', 'wave', 'status', 'partitions', 'rows read', 'rows written', 'rate', 'ETA', 'notes'] });
  for (const m of r.members) table.push(memberRow(m));
  lines.push(table.toString());
  lines.push(
    `  in all: ${n(t.partitionsDone)} of ${n(t.partitions)} partitions done, ${n(t.rowsRead)} rows read, ${n(t.rowsWritten)} written` +
      (t.rowsPerSecond > 0 ? `, ${n(t.rowsPerSecond)} rows/s now` : ''),
  );
  for (const m of r.members) {
    if (m.waitingForWorker) lines.push(`${m.variable}: ${workerGapLine(m.waitingForWorker)}`);
    for (const h of m.run?.holding ?? []) lines.push(`${m.variable}: ${h.partitionId} held: ${h.reason}`);
    for (const f of m.run?.failures ?? []) lines.push(`${m.variable}: ${f.partitionId} ${f.status}${f.range ? ` (${f.range})` : ''}: ${f.error ?? ''}`);
    // a run can fail with every partition done: its gate (the final check, an invariant) said no
    if (m.run?.lastError && m.run.failures.length === 0) lines.push(`${m.variable}: ${m.run.lastError}`);
    if (m.error && !m.run) lines.push(`${m.variable}: ${m.error}`);
    if (m.unread) lines.push(`${m.variable}: ${m.unread}`);
  }
  if (r.excluded.length > 0) lines.push(`Excluded on purpose: ${r.excluded.map((e) => `${e.variable} (${e.reason})`).join(', ')}`);
  for (const a of r.approvals) lines.push(`Wave ${a.wave} approved by ${a.actor}${a.reason ? `: ${a.reason}` : ''}`);
  lines.push(`One member: backfill status ${r.members[0]?.runId ?? '<run>'} --database ${r.members[0]?.variable ?? 'VAR'}`);
  return lines.join('\n');
}

function memberRow(m: FleetMemberStatus): (string | number)[] {
  const run = m.run;
  const status = run?.paused && m.status === 'running' ? 'paused' : m.status;
  const done = run ? run.totals.byStatus.succeeded + run.totals.byStatus.failed + run.totals.byStatus.cancelled : 0;
  const notes = m.waitingForWorker
    ? `no worker serves ${m.variable}`
    : run?.canaryHold
      ? `canary: ${run.canaryHold}`
      : (run?.holding.length ?? 0) > 0
        ? `${run!.holding.length} partition(s) held`
        : (run?.failures.length ?? 0) > 0
          ? `${run!.failures.length} partition(s) failed`
          : m.unreachable
            ? 'database unreachable: holds'
            : m.unread
              ? 'ledger not read here'
              : '';
  return [
    m.variable,
    m.wave,
    status,
    run ? `${n(done)}/${n(run.totals.total)}` : '',
    run ? n(run.totals.rowsRead) : '',
    run ? n(run.totals.rowsWritten) : '',
    run?.eta ? `${n(run.eta.rowsPerSecond)}/s` : '',
    run?.eta ? seconds(run.eta.seconds) : '',
    notes,
  ];
}
