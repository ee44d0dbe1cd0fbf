/**
 * What a run report says, in rows: its scope, throughput, partitions, gates, actions, events
 * and distributions, shared by the Markdown (markdown.ts) and the HTML page (html.ts).
 */
import { resolveSpec } from '../specs/resolve';
import type { Capture } from '../gates/distributions';
import type { ReportData } from './collect';
import { compact } from './svg';
import { describeSubset } from '../compiler/subset';

/** Partitions listed row by row up to this many; beyond it the table shows the non-succeeded ones and the charts the rest. */
export const LISTED_PARTITIONS = 500;
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

export function partitionCounts(r: ReportData): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of r.partitions) counts[p.status] = (counts[p.status] ?? 0) + 1;
  return counts;
}

export function gateLine(g: ReportData['gates'][number]): string[] {
  return [g.stage, g.gate, g.partitionId ?? 'all', g.passed ? 'passed' : 'FAILED', String(g.rowsChecked), String(g.violations)];
}

export function scopeLines(r: ReportData): [string, string][] {
  const s = resolveSpec(r.spec);
  const p = s.partition;
  return [
    ['Reason', s.reason],
    ['Source', `${s.source.table} (key ${s.source.key.join(', ')})${s.source.where ? ` where ${s.source.where}` : ''}`],
    [
      'Partitions',
      `${p.by} on ${p.column}${'size' in p ? `, size ${p.size}` : ''}: ${r.subset ? `a subset, ${describeSubset(r.subset)}` : r.summary.partitions.total}`,
    ],
    ['Target', `${r.summary.target} (${s.target.mode}, key ${s.target.key.join(', ')})`],
    ['Transform', `${r.summary.transform.name}@${r.summary.transform.version} (${r.summary.transform.kind}, code ${r.summary.transform.hash.slice(0, 16)})`],
    ['Spec', `${r.specFile ?? 'not recorded'} (hash ${r.specHash.slice(0, 16)})`],
    ['Started', `${r.summary.startedAt ?? 'not started'} by ${r.summary.startedBy}`],
    ['Database role', databaseRole(r)],
    ['Engine', r.engineVersion ?? 'not recorded'],
    ['Finished', r.summary.finishedAt ?? 'not finished'],
  ];
}

function databaseRole(r: ReportData): string {
  const d = r.databaseRole;
  if (!d) return 'not recorded';
  return d.superuser ? `${d.role} (superuser)` : d.bypassRls ? `${d.role} (BYPASSRLS)` : d.role;
}

export function listedPartitions(r: ReportData) {
  return r.partitions.length <= LISTED_PARTITIONS ? r.partitions : r.partitions.filter((p) => p.status !== 'succeeded');
}

/** The partitions table's head and rows, as both forms list them. */
export const PARTITION_HEAD = ['partition', 'status', 'read', 'written', 'unchanged', 'skipped', 'chunks', 'attempts'];

export function partitionRows(r: ReportData): string[][] {
  return listedPartitions(r).map((p) => [
    p.id,
    p.status,
    String(p.rowsRead),
    String(p.rowsWritten),
    String(p.rowsUnchanged),
    String(p.rowsSkipped),
    String(p.chunks),
    String(p.attempts),
  ]);
}

export const ACTION_HEAD = ['#', 'action', 'status', 'tries', 'finished', 'error'];

export function actionRows(r: ReportData): string[][] {
  return r.actions.map((a) => [String(a.position + 1), a.description, a.status, String(a.tries), a.finished_at?.toISOString() ?? '', a.last_error ?? '']);
}

export const EVENT_HEAD = ['at', 'event', 'actor', 'reason'];

export function eventRows(r: ReportData): string[][] {
  return r.events.map((e) => [e.at, e.kind, e.actor ?? '', e.reason ?? '']);
}

export const GATE_HEAD = ['stage', 'gate', 'partition', 'result', 'rows compared', 'violations'];

export function summarizeGovernors(r: ReportData): string {
  const counts: Record<string, number> = {};
  for (const c of r.chunks) counts[c.governedBy] = (counts[c.governedBy] ?? 0) + 1;
  const parts = Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} sized by ${k}`);
  return parts.length ? parts.join(', ') : 'no chunks';
}

function measures(c: Capture | undefined): string[] {
  if (!c) return ['', '', '', '', ''];
  const null_ = c.rows ? `${+((c.nulls / c.rows) * 100).toFixed(2)} %` : '';
  return [String(c.rows), null_, String(c.distinct), c.mean === null ? '' : compact(c.mean), c.quantiles ? c.quantiles.map(compact).join(' / ') : ''];
}

export function distributionRows(r: ReportData): string[][] {
  return r.distributions.flatMap((d) => [
    [d.column, 'before', ...measures(d.before)],
    [d.column, 'after', ...measures(d.after)],
  ]);
}

export const DISTRIBUTION_HEAD = ['column', 'capture', 'rows', 'NULL share', 'distinct', 'mean', 'p10 / p50 / p90'];
