/**
 * A run report as one self-contained HTML page with inline SVG charts, for attaching to a
 * change ticket (`backfill report -o html`): the Markdown's sections, with charts.
 */
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
  LISTED_PARTITIONS,
  PARTITION_HEAD,
  partitionCounts,
  partitionRows,
  scopeLines,
  throughput,
  type Throughput,
} from './report-tables';
import { compact, escapeXml, groupedBars, lineChart, scatterChart, stackedBars } from './svg';

export function renderHtml(r: ReportData): string {
  const s = r.summary;
  const t = throughput(r);
  const charts = reportCharts(r, t);
  const failedGates = r.gates.filter((g) => !g.passed).length;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backfill ${escapeXml(s.name)} / ${escapeXml(s.runId)}</title>
${pageStyle(s.status)}</head><body>
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
${r.gates.length ? htmlTable(GATE_HEAD, r.gates.map(gateLine), 'gates') : '<p>No gate recorded (the run did not reach its checks).</p>'}
<h2>Distributions</h2>
${distributionHtml(r)}
<h2>Downstream</h2>
<p>Consumers: ${escapeXml(s.consumers.length ? s.consumers.join(', ') : 'not listed')}${s.changesSemantics ? ' — <b>this change alters what the values mean; consumers must be told</b>' : ''}. After-actions: ${escapeXml(r.downstream ?? 'none')}.</p>
${r.actions.length ? htmlTable(ACTION_HEAD, actionRows(r)) : ''}
<h2>Partitions${r.partitions.length > LISTED_PARTITIONS ? ' not succeeded' : ''}</h2>
${htmlTable(PARTITION_HEAD, partitionRows(r))}
<h2>Audit trail</h2>
${htmlTable(EVENT_HEAD, eventRows(r))}
</body></html>
`;
}

/** Throughput over time, chunk durations, rows per partition and partitions by status. */
function reportCharts(r: ReportData, t: Throughput): string[] {
  const seconds = (v: number) => `${compact(v)} s`;
  const thin = <T>(list: T[], n: number) => (list.length <= n ? list : list.filter((_, i) => i % Math.ceil(list.length / n) === 0));
  const shown = thin(r.partitions, 120);
  return [
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
}

/** The page's styles; the status badge's colour follows the run's status. */
function pageStyle(status: string): string {
  const badge = status === 'succeeded' ? '#2ca02c' : status === 'failed' ? '#d62728' : '#7f7f7f';
  return `<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1340px;color:#1d1d1f;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.status{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff;background:${badge}}
.muted{color:#666}.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(640px,1fr));gap:16px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid #e3e3e3;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f6f6f6}
td.bad{color:#d62728;font-weight:600}pre{background:#f6f8fa;padding:10px;overflow:auto;border-radius:4px}
.kpi{display:flex;gap:24px;flex-wrap:wrap}.kpi div{background:#f6f8fa;border-radius:6px;padding:8px 14px}.kpi b{display:block;font-size:18px}
</style>`;
}

function htmlTable(head: string[], rows: string[][], cls = ''): string {
  return `<table class="${cls}"><thead><tr>${head.map((h) => `<th>${escapeXml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((row) => `<tr>${row.map((v) => `<td${v === 'FAILED' || v === 'failed' ? ' class="bad"' : ''}>${escapeXml(v)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
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
