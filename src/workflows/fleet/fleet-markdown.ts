/** The fleet in the Temporal Web UI's current details: one row per member, and the totals. */
import type { FleetRecord, FleetStatus, MemberOutcome } from './input';
import type { FleetState } from './fleet-state';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ');

export function renderFleetMarkdown(record: FleetRecord, s: FleetState, status: FleetStatus): string {
  const done = s.members.filter((m) => m.status === 'succeeded').length;
  const rows = s.members.reduce((n, m) => n + (m.result?.rowsWritten ?? 0), 0);
  const lines = [
    `**fleet ${record.name}** \`${record.fleetId}\` — **${status}**, wave ${s.wave} of ${s.waves}, ${done} of ${s.members.length} member(s) succeeded, ${rows} rows written by finished members`,
  ];
  if (s.awaitingApproval !== undefined) lines.push('', `Wave ${s.awaitingApproval} waits for a person: \`backfill approve ${record.fleetId}\``);
  if (s.paused) lines.push('', `Paused by ${s.paused.actor}${s.paused.reason ? ` (${cell(s.paused.reason)})` : ''}`);
  if (s.stopping) lines.push('', `Stopping: ${cell(s.stopping)}`);
  if (s.cancelRequested)
    lines.push('', `Cancel requested by ${s.cancelRequested.actor}${s.cancelRequested.reason ? ` (${cell(s.cancelRequested.reason)})` : ''}`);
  lines.push('', '| member | wave | status | rows written | run |', '|---|---|---|---|---|');
  for (const m of s.members) lines.push(memberRow(m));
  if (record.excluded.length > 0) lines.push('', `Excluded on purpose: ${record.excluded.map((e) => `${e.variable} (${cell(e.reason)})`).join(', ')}`);
  return lines.join('\n');
}

function memberRow(m: MemberOutcome): string {
  const status = m.error ? `${m.status}: ${cell(m.error).slice(0, 120)}` : m.status;
  return `| ${m.variable} | ${m.wave} | ${status} | ${m.result ? m.result.rowsWritten : ''} | \`${m.workflowId}\` |`;
}
