/** A fleet's report as Markdown: the fleet first, then each member's report with its headings one level down. */
import type { FleetReportData } from '../fleet/fleet-report';
import { LEDGERS_ONLY } from '../fleet/fleet-status-report';
import { renderMarkdown } from './markdown';

const cell = (text: string | number) => String(text).replace(/\|/g, '\\|');

export function renderFleetMarkdown(data: FleetReportData): string {
  const f = data.fleet;
  const lines = [
    `# Fleet ${f.name} \`${f.fleetId}\`: ${f.status}`,
    '',
    `${f.reason}`,
    '',
    `- started by ${f.startedBy}; ${f.members.length} member(s) in ${f.waves} wave(s), ${f.concurrency} at once, onError ${f.onError}`,
    ...(f.approvedBy ? [`- its plan approved by ${f.approvedBy}`] : []),
    ...(f.readFrom === 'ledgers' ? [`- ${LEDGERS_ONLY}`] : []),
    `- ${f.totals.byStatus.succeeded} succeeded, ${f.totals.byStatus.failed} failed, ${f.totals.byStatus.cancelled} cancelled, ${f.totals.byStatus['not-started']} not started`,
    `- ${f.totals.rowsRead} rows read, ${f.totals.rowsWritten} written, ${f.totals.partitionsDone} of ${f.totals.partitions} partitions done`,
    ...f.approvals.map((a) => `- wave ${a.wave} approved by ${a.actor}${a.reason ? `: ${a.reason}` : ''}`),
    ...f.excluded.map((e) => `- excluded on purpose: ${e.variable} (${e.reason})`),
    ...f.events
      .filter((e) => ['paused', 'resumed', 'cancel-requested', 'stopping'].includes(e.kind))
      .map((e) => `- ${e.at} ${e.kind}${e.actor ? ` by ${e.actor}` : ''}${e.reason ? `: ${e.reason}` : ''}`),
    '',
    '| member | wave | status | run | rows read | rows written |',
    '|---|---|---|---|---|---|',
    ...f.members.map(
      (m) => `| ${m.variable} | ${m.wave} | ${cell(m.status)} | \`${m.runId}\` | ${m.run?.totals.rowsRead ?? ''} | ${m.run?.totals.rowsWritten ?? ''} |`,
    ),
  ];
  for (const m of data.members) {
    lines.push('', `## Member ${m.variable}`, '');
    if (m.report) lines.push(renderMarkdown(m.report).replace(/^(#+) /gm, '#$1 '));
    else lines.push(m.unread ? `Not read here: ${m.unread}.` : 'No run: this member never started.');
  }
  return `${lines.join('\n')}\n`;
}
