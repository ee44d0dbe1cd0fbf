/**
 * A run report as Markdown (for a ticket's text) and as one self-contained HTML page with
 * inline SVG charts (for attaching): scope and reason, the frozen transform, partitions and
 * rows, throughput and chunk durations with what governed them, every gate, downstream
 * actions and consumers, and the audit trail.
 */
import { resolveSpec } from '../specs/resolve';
import type { ReportData } from './collect';
import type { Capture } from '../validation/distributions';
import { compact, escapeXml, groupedBars, lineChart, scatterChart, stackedBars } from './svg';

/** Partitions listed row by row up to this many; beyond it the table shows the non-succeeded ones and the charts the rest. */
const LISTED_PARTITIONS = 500;
const BUCKETS = 40;

export interface Throughput {
  /** [seconds since the first chunk, rows read per second] per time bucket. */
  points: [number, number][];
  meanRowsPerSecond: number;
  peakRowsPerSecond: number;
  chunkMsP50: number;
  chunkMsP95: number;
}

export function throughput(r: ReportData): Throughput {
  const chunks = r.chunks;
  if (chunks.length === 0) return { points: [], meanRowsPerSecond: 0, peakRowsPerSecond: 0, chunkMsP50: 0, chunkMsP95: 0 };
  const span = Math.max(1000, chunks[chunks.length - 1].atMs);
  const width = span / BUCKETS;
  const rows = new Array<number>(BUCKETS).fill(0);
  for (const c of chunks) rows[Math.min(BUCKETS - 1, Math.floor(c.atMs / width))] += c.rowsRead;
  const points = rows.map((n, i) => [((i + 1) * width) / 1000, n / (width / 1000)] as [number, number]);
  const durations = chunks.map((c) => c.durationMs).sort((a, b) => a - b);
  const q = (p: number) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))];
  return {
    points,
    meanRowsPerSecond: chunks.reduce((n, c) => n + c.rowsRead, 0) / (span / 1000),
    peakRowsPerSecond: Math.max(...points.map((p) => p[1])),
    chunkMsP50: q(0.5),
    chunkMsP95: q(0.95),
  };
}

function partitionCounts(r: ReportData): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of r.partitions) counts[p.status] = (counts[p.status] ?? 0) + 1;
  return counts;
}

function gateLine(g: ReportData['gates'][number]): string[] {
  return [g.stage, g.gate, g.partitionId ?? 'all', g.passed ? 'passed' : 'FAILED', String(g.rowsChecked), String(g.violations)];
}

function scopeLines(r: ReportData): [string, string][] {
  const s = resolveSpec(r.spec);
  const p = s.partition;
  return [
    ['Reason', s.reason],
    ['Source', `${s.source.table} (key ${s.source.key.join(', ')})${s.source.where ? ` where ${s.source.where}` : ''}`],
    ['Partitions', `${p.by} on ${p.column}${'size' in p ? `, size ${p.size}` : ''}: ${r.summary.partitions.total}`],
    ['Target', `${r.summary.target} (${s.target.mode}, key ${s.target.key.join(', ')})`],
    ['Transform', `${r.summary.transform.name}@${r.summary.transform.version} (${r.summary.transform.kind}, code ${r.summary.transform.hash.slice(0, 16)})`],
    ['Spec', `${r.specFile ?? 'not recorded'} (hash ${r.specHash.slice(0, 16)})`],
    ['Started', `${r.summary.startedAt ?? 'not started'} by ${r.summary.startedBy}`],
    ['Database role', databaseRole(r)],
    ['Finished', r.summary.finishedAt ?? 'not finished'],
  ];
}

function databaseRole(r: ReportData): string {
  const d = r.databaseRole;
  if (!d) return 'not recorded';
  return d.superuser ? `${d.role} (superuser)` : d.bypassRls ? `${d.role} (BYPASSRLS)` : d.role;
}

function mdTable(head: string[], rows: string[][]): string {
  const cell = (v: string) => v.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
}

function listedPartitions(r: ReportData) {
  return r.partitions.length <= LISTED_PARTITIONS ? r.partitions : r.partitions.filter((p) => p.status !== 'succeeded');
}

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
    r.gates.length
      ? mdTable(['stage', 'gate', 'partition', 'result', 'rows compared', 'violations'], r.gates.map(gateLine))
      : 'No gate recorded (the run did not reach its checks).',
    '',
    '## Distributions',
    '',
    distributionMarkdown(r),
    '',
    '## Downstream',
    '',
    `Consumers: ${s.consumers.length ? s.consumers.join(', ') : 'not listed'}${s.changesSemantics ? ' — **this change alters what the values mean; consumers must be told**' : ''}.`,
    '',
    r.actions.length
      ? mdTable(
          ['#', 'action', 'status', 'tries', 'finished', 'error'],
          r.actions.map((a) => [String(a.position + 1), a.description, a.status, String(a.tries), a.finished_at?.toISOString() ?? '', a.last_error ?? '']),
        )
      : 'No after-actions in the spec.',
    '',
    '## Partitions',
    '',
    mdTable(
      ['partition', 'status', 'read', 'written', 'unchanged', 'skipped', 'chunks', 'attempts'],
      listedPartitions(r).map((p) => [
        p.id,
        p.status,
        String(p.rowsRead),
        String(p.rowsWritten),
        String(p.rowsUnchanged),
        String(p.rowsSkipped),
        String(p.chunks),
        String(p.attempts),
      ]),
    ),
    '',
    '## Audit trail',
    '',
    mdTable(
      ['at', 'event', 'actor', 'reason'],
      r.events.map((e) => [e.at, e.kind, e.actor ?? '', e.reason ?? '']),
    ),
    '',
  ];
  return out.join('\n');
}

function summarizeGovernors(r: ReportData): string {
  const counts: Record<string, number> = {};
  for (const c of r.chunks) counts[c.governedBy] = (counts[c.governedBy] ?? 0) + 1;
  const parts = Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} sized by ${k}`);
  return parts.length ? parts.join(', ') : 'no chunks';
}

function htmlTable(head: string[], rows: string[][], cls = ''): string {
  return `<table class="${cls}"><thead><tr>${head.map((h) => `<th>${escapeXml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((row) => `<tr>${row.map((v) => `<td${v === 'FAILED' || v === 'failed' ? ' class="bad"' : ''}>${escapeXml(v)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

export function renderHtml(r: ReportData): string {
  const s = r.summary;
  const t = throughput(r);
  const seconds = (v: number) => `${compact(v)} s`;
  const thin = <T>(list: T[], n: number) => (list.length <= n ? list : list.filter((_, i) => i % Math.ceil(list.length / n) === 0));
  const shown = thin(r.partitions, 120);
  const charts = [
    lineChart({
      title: 'Throughput over time',
      kind: 'throughput',
      points: t.points,
      xLabel: 'seconds since the first chunk',
      yLabel: 'rows read / s',
      xTick: (v) => `${compact(v)}`,
    }),
    scatterChart({
      title: 'Chunk durations, by what governed their size',
      kind: 'chunk-durations',
      points: r.chunks.map((c) => ({ x: c.atMs / 1000, y: c.durationMs, group: c.governedBy })),
      xLabel: 'seconds since the first chunk',
      yLabel: 'ms per chunk',
      xTick: (v) => seconds(v),
    }),
    stackedBars({
      title: `Rows per partition${shown.length < r.partitions.length ? ` (every ${Math.ceil(r.partitions.length / 120)}th of ${r.partitions.length})` : ''}`,
      kind: 'rows-per-partition',
      categories: shown.map((p) => p.id),
      series: [
        { name: 'written', values: shown.map((p) => p.rowsWritten) },
        { name: 'unchanged', values: shown.map((p) => p.rowsUnchanged) },
        { name: 'skipped', values: shown.map((p) => p.rowsSkipped) },
      ],
      xLabel: 'partition',
      yLabel: 'rows',
    }),
    stackedBars({
      title: 'Partitions by status',
      kind: 'partitions-by-status',
      categories: Object.keys(partitionCounts(r)),
      series: [{ name: 'partitions', values: Object.values(partitionCounts(r)) }],
      xLabel: 'status',
      yLabel: 'partitions',
    }),
  ];
  const failedGates = r.gates.filter((g) => !g.passed).length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backfill ${escapeXml(s.name)} / ${escapeXml(s.runId)}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1340px;color:#1d1d1f;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.status{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff;background:${s.status === 'succeeded' ? '#2ca02c' : s.status === 'failed' ? '#d62728' : '#7f7f7f'}}
.muted{color:#666}.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(640px,1fr));gap:16px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid #e3e3e3;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f6f6f6}
td.bad{color:#d62728;font-weight:600}pre{background:#f6f8fa;padding:10px;overflow:auto;border-radius:4px}
.kpi{display:flex;gap:24px;flex-wrap:wrap}.kpi div{background:#f6f8fa;border-radius:6px;padding:8px 14px}.kpi b{display:block;font-size:18px}
</style></head><body>
<h1>Backfill ${escapeXml(s.name)} / ${escapeXml(s.runId)} <span class="status">${escapeXml(s.status)}</span></h1>
<div class="muted">Generated ${escapeXml(r.generatedAt)} from the ledger. Keys and values of failed checks stay in the ledger: <code>backfill status ${escapeXml(s.runId)}</code>.</div>
<h2>Scope and reason</h2>
${htmlTable(['', ''], scopeLines(r))}
<h2>Outcome</h2>
<div class="kpi">
<div><b>${s.partitions.total}</b>partitions</div><div><b>${compact(s.rows.read)}</b>rows read</div><div><b>${compact(s.rows.written)}</b>written</div>
<div><b>${compact(s.rows.unchanged)}</b>unchanged</div><div><b>${compact(s.rows.skipped)}</b>skipped</div>
<div><b>${compact(t.meanRowsPerSecond)}/s</b>mean throughput</div><div><b>${t.chunkMsP50} / ${t.chunkMsP95} ms</b>chunk p50 / p95</div>
<div><b>${r.gates.length === 0 ? 'none' : failedGates === 0 ? 'all passed' : `${failedGates} failed`}</b>gates</div>
</div>
<div class="grid">${charts.join('\n')}</div>
<h2>Frozen transform</h2>
${r.transformSql ? `<pre>${escapeXml(r.transformSql.trim())}</pre>` : `<p>TypeScript module <code>${escapeXml(r.modulePath ?? '')}</code>, code hash <code>${escapeXml(s.transform.hash)}</code></p>`}
<h2>Gates</h2>
${r.gates.length ? htmlTable(['stage', 'gate', 'partition', 'result', 'rows compared', 'violations'], r.gates.map(gateLine), 'gates') : '<p>No gate recorded (the run did not reach its checks).</p>'}
<h2>Distributions</h2>
${distributionHtml(r)}
<h2>Downstream</h2>
<p>Consumers: ${escapeXml(s.consumers.length ? s.consumers.join(', ') : 'not listed')}${s.changesSemantics ? ' — <b>this change alters what the values mean; consumers must be told</b>' : ''}. After-actions: ${escapeXml(r.downstream ?? 'none')}.</p>
${
  r.actions.length
    ? htmlTable(
        ['#', 'action', 'status', 'tries', 'finished', 'error'],
        r.actions.map((a) => [String(a.position + 1), a.description, a.status, String(a.tries), a.finished_at?.toISOString() ?? '', a.last_error ?? '']),
      )
    : ''
}
<h2>Partitions${r.partitions.length > LISTED_PARTITIONS ? ' not succeeded' : ''}</h2>
${htmlTable(
  ['partition', 'status', 'read', 'written', 'unchanged', 'skipped', 'chunks', 'attempts'],
  listedPartitions(r).map((p) => [
    p.id,
    p.status,
    String(p.rowsRead),
    String(p.rowsWritten),
    String(p.rowsUnchanged),
    String(p.rowsSkipped),
    String(p.chunks),
    String(p.attempts),
  ]),
)}
<h2>Audit trail</h2>
${htmlTable(
  ['at', 'event', 'actor', 'reason'],
  r.events.map((e) => [e.at, e.kind, e.actor ?? '', e.reason ?? '']),
)}
</body></html>
`;
}

function measures(c: Capture | undefined): string[] {
  if (!c) return ['', '', '', '', ''];
  const null_ = c.rows ? `${+((c.nulls / c.rows) * 100).toFixed(2)} %` : '';
  return [String(c.rows), null_, String(c.distinct), c.mean === null ? '' : compact(c.mean), c.quantiles ? c.quantiles.map(compact).join(' / ') : ''];
}

function distributionRows(r: ReportData): string[][] {
  return r.distributions.flatMap((d) => [
    [d.column, 'before', ...measures(d.before)],
    [d.column, 'after', ...measures(d.after)],
  ]);
}

const DISTRIBUTION_HEAD = ['column', 'capture', 'rows', 'NULL share', 'distinct', 'mean', 'p10 / p50 / p90'];

export function distributionMarkdown(r: ReportData): string {
  return r.distributions.length ? mdTable(DISTRIBUTION_HEAD, distributionRows(r)) : 'No distributions declared.';
}

/** One small before/after histogram per declared column. */
export function distributionHtml(r: ReportData): string {
  if (r.distributions.length === 0) return '<p>No distributions declared.</p>';
  const charts = r.distributions
    .filter((d) => d.before?.histogram || d.after?.histogram)
    .map((d) => {
      const h = (d.before?.histogram ?? d.after?.histogram)!;
      const step = (h.hi - h.lo) / (h.counts.length - 2);
      const categories = h.counts.map((_, i) =>
        i === 0 ? `< ${compact(h.lo)}` : i === h.counts.length - 1 ? `≥ ${compact(h.hi)}` : compact(h.lo + (i - 1) * step),
      );
      return groupedBars({
        title: `${d.column}: before and after`,
        kind: `distribution-${d.column}`,
        categories,
        series: [
          { name: 'before', values: d.before?.histogram?.counts ?? [] },
          { name: 'after', values: d.after?.histogram?.counts ?? [] },
        ],
        xLabel: `${d.column} (bucket start)`,
        yLabel: 'rows',
      });
    });
  return `${htmlTable(DISTRIBUTION_HEAD, distributionRows(r))}<div class="grid">${charts.join('\n')}</div>`;
}
