/** A run report as Markdown, for a ticket's text (`backfill report`). */
import type { ReportData } from './collect';
import {
  ACTION_HEAD,
  actionRows,
  DISTRIBUTION_HEAD,
  distributionRows,
  EVENT_HEAD,
  eventRows,
  GATE_HEAD,
  gateLine,
  PARTITION_HEAD,
  partitionCounts,
  partitionRows,
  scopeLines,
  summarizeGovernors,
  throughput,
} from './report-tables';
import { compact } from './svg';

export function renderMarkdown(r: ReportData): string {
  const t = throughput(r);
  const s = r.summary;
  const out: string[] = [
    `# Backfill ${s.name} / ${s.runId}: ${s.status}`,
    '',
    `Generated ${r.generatedAt} from the ledger. Row keys and values of failed checks stay in the ledger (\`backfill status ${s.runId}\`).`,
    '',
    '## Scope and reason',
    '',
    mdTable(
      ['', ''],
      scopeLines(r).map(([k, v]) => [k, v]),
    ),
    '',
    '## Frozen transform',
    '',
    r.transformSql ? '```sql\n' + r.transformSql.trim() + '\n```' : `TypeScript module \`${r.modulePath}\`, code hash \`${s.transform.hash}\``,
    '',
    '## Outcome',
    '',
    mdTable(
      ['partitions', ...Object.keys(partitionCounts(r)), 'rows read', 'written', 'unchanged', 'skipped'],
      [
        [
          String(s.partitions.total),
          ...Object.values(partitionCounts(r)).map(String),
          String(s.rows.read),
          String(s.rows.written),
          String(s.rows.unchanged),
          String(s.rows.skipped),
        ],
      ],
    ),
    '',
    `Throughput: ${compact(t.meanRowsPerSecond)} rows/s on average, ${compact(t.peakRowsPerSecond)} at peak; chunks took ${t.chunkMsP50} ms (median) and ${t.chunkMsP95} ms (95th percentile), ` +
      `${summarizeGovernors(r)}.`,
    '',
    '## Gates',
    '',
    r.gates.length ? mdTable(GATE_HEAD, r.gates.map(gateLine)) : 'No gate recorded (the run did not reach its checks).',
    '',
    '## Distributions',
    '',
    distributionMarkdown(r),
    '',
    '## Downstream',
    '',
    `Consumers: ${s.consumers.length ? s.consumers.join(', ') : 'not listed'}${s.changesSemantics ? ' — **this change alters what the values mean; consumers must be told**' : ''}.`,
    '',
    r.actions.length ? mdTable(ACTION_HEAD, actionRows(r)) : 'No after-actions in the spec.',
    '',
    ...(r.notifications.length
      ? [
          '## Notifications',
          '',
          mdTable(
            ['moment', 'target', 'status', 'attempts', 'delivered', 'error'],
            r.notifications.map((n) => [n.moment, n.target, n.status, String(n.attempts), n.deliveredAt ?? '', n.error ?? '']),
          ),
          '',
        ]
      : []),
    '## Partitions',
    '',
    mdTable(PARTITION_HEAD, partitionRows(r)),
    '',
    '## Audit trail',
    '',
    mdTable(EVENT_HEAD, eventRows(r)),
    '',
  ];
  return out.join('\n');
}

function mdTable(head: string[], rows: string[][]): string {
  const cell = (v: string) => v.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
}

export function distributionMarkdown(r: ReportData): string {
  return r.distributions.length ? mdTable(DISTRIBUTION_HEAD, distributionRows(r)) : 'No distributions declared.';
}
