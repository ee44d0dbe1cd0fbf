/**
 * The gates a run passes before it may expand (canary) and before it may end succeeded
 * (final): the transform recomputed and compared with the target, and the spec's declared
 * invariants. Each result goes to the ledger (src/ledger/gates.ts); what comes back — and
 * travels through Temporal — names gates, partitions and counts, never row values.
 */
import type pg from 'pg';
import { fnv1a } from '../domain/ids';
import { recordGate, type GateStage } from '../ledger/gates';
import { chunkStarts } from '../ledger/chunks';
import type { PartitionBounds } from '../domain/types';
import type { ValidateSpec } from '../specs/validate-schema';
import { comparePartition, MAX_EXAMPLES, outputTypes, wrongRows, type Comparison, type Recomputable } from './compare';
import { checkInvariant, invariantsFor, type InvariantResult } from './invariants';

/** finalCheck: sample reads this share (1/n) of each partition's rows, as one slice of its keys. */
export const FINAL_SAMPLE = 16;

export function finalSampleEvery(validate: ValidateSpec | undefined): number {
  const mode = validate?.finalCheck ?? 'sample';
  return mode === 'all' ? 1 : mode === 'off' ? 0 : FINAL_SAMPLE;
}

/**
 * The canary's partitions, by ordinal: the first, the last and the rest evenly spaced between,
 * so the canary sees both ends of the scope. Deterministic: the same plan, the same canary.
 */
export function canaryOrdinals(total: number, count: number | string): number[] {
  const wanted = typeof count === 'number' ? count : Math.ceil((total * Number(count.replace('%', ''))) / 100);
  const k = Math.max(1, Math.min(total, wanted));
  if (k === 1 || total === 1) return [0];
  const picked = new Set<number>();
  for (let i = 0; i < k; i++) picked.add(Math.round((i * (total - 1)) / (k - 1)));
  return [...picked].sort((a, b) => a - b);
}

export interface CheckedPartition {
  id: string;
  bounds: PartitionBounds;
}

export interface GateTally {
  /** Per gate: rows checked and violations, summed over partitions. */
  gates: Record<string, { rowsChecked: number; violations: number }>;
  /** One line per failure, without row data; at most MAX_FAILURE_LINES. */
  failures: string[];
  failureCount: number;
  partitionsChecked: number;
}

const MAX_FAILURE_LINES = 10;

export function emptyTally(): GateTally {
  return { gates: {}, failures: [], failureCount: 0, partitionsChecked: 0 };
}

/** The tallies of disjoint sets of partitions as one: what a single pass over all of them would have counted. */
export function mergeTallies(tallies: readonly GateTally[]): GateTally {
  const merged = emptyTally();
  for (const t of tallies) {
    for (const [gate, g] of Object.entries(t.gates)) count(merged, gate, g.rowsChecked, g.violations);
    merged.failures.push(...t.failures.slice(0, MAX_FAILURE_LINES - merged.failures.length));
    merged.failureCount += t.failureCount;
    merged.partitionsChecked += t.partitionsChecked;
  }
  return merged;
}

export interface GateContext {
  pool: pg.Pool;
  ctx: Recomputable;
  runId: string;
  attempt: number;
  stage: GateStage;
  /** 0: no comparison; 1: every key; n: a slice of 1/n of each partition's keys. */
  sampleEvery: number;
  timeoutMs: number;
  pageRows: number;
  /** Record every partition's result (canary, verify), not only the failures (final, where there may be 100,000). */
  recordPassing: boolean;
  onPage?: () => void;
  /** Prefixes the gate names of the sums (a ramp stage's, so each stage keeps its own). */
  stageLabel?: string;
}

/** Adds one check's rows and violations to its gate's sum, and its failure line when it found any. */
export function tallyCheck(t: GateTally, gate: string, found: { rowsChecked: number; violations: number; failure?: string }): void {
  count(t, gate, found.rowsChecked, found.violations);
  if (found.violations > 0 && found.failure) {
    t.failureCount++;
    if (t.failures.length < MAX_FAILURE_LINES) t.failures.push(found.failure);
  }
}

function count(t: GateTally, gate: string, rowsChecked: number, violations: number): void {
  const g = (t.gates[gate] ??= { rowsChecked: 0, violations: 0 });
  g.rowsChecked += rowsChecked;
  g.violations += violations;
}

/** One check's result in the ledger, under the gate context's run, attempt and stage: passed when it found no violation. */
export async function recordCheck(
  g: GateContext,
  r: { gate: string; partitionId: string | null; rowsChecked: number; violations: number; examples?: string; startedAt?: number },
): Promise<void> {
  await recordGate(g.pool, {
    runId: g.runId,
    attempt: g.attempt,
    stage: g.stage,
    gate: r.gate,
    partitionId: r.partitionId,
    passed: r.violations === 0,
    rowsChecked: r.rowsChecked,
    violations: r.violations,
    examples: r.examples,
    durationMs: r.startedAt === undefined ? 0 : Date.now() - r.startedAt,
  });
}

/** Compares one partition and checks its partition-scope invariants; adds to the tally and the ledger. */
export async function checkPartition(g: GateContext, partition: CheckedPartition, tally: GateTally, types: string[] | undefined): Promise<PartitionFindings> {
  const mode = g.ctx.spec.target.mode;
  const findings: PartitionFindings = { invariants: [] };
  tally.partitionsChecked++;
  if (g.sampleEvery > 0 && types) {
    const started = Date.now();
    const slice = g.sampleEvery > 1 ? await sampleSlice(g.pool, g.runId, partition.id, g.sampleEvery) : undefined;
    const c = (findings.comparison = await comparePartition(g.pool, g.ctx, partition.bounds, {
      pageRows: g.pageRows,
      timeoutMs: g.timeoutMs,
      types,
      onPage: g.onPage,
      slice,
    }));
    const wrong = wrongRows(c, mode);
    const what = [
      c.differing && `${c.differing} differ`,
      mode !== 'update' && c.missing && `${c.missing} absent`,
      c.extra && `${c.extra} not produced by the transform`,
    ]
      .filter(Boolean)
      .join(', ');
    tallyCheck(tally, 'compare', {
      rowsChecked: c.compared,
      violations: wrong,
      failure: `compare: partition ${partition.id}: ${wrong} of ${c.compared} recomputed row(s) do not match the target (${what})`,
    });
    if (wrong > 0 || g.recordPassing) {
      const examples = wrong > 0 ? `keys: ${c.examples.slice(0, MAX_EXAMPLES).join(', ')}; in ${c.ranges.slice(0, 5).join('; ')}` : undefined;
      await recordCheck(g, { gate: 'compare', partitionId: partition.id, rowsChecked: c.compared, violations: wrong, examples, startedAt: started });
    }
  }
  for (const invariant of invariantsFor(g.ctx.spec.validate?.invariants, 'partition')) {
    const started = Date.now();
    const r = await checkInvariant(g.pool, g.ctx.compiled, invariant, partition.bounds, g.timeoutMs);
    findings.invariants.push(r);
    const gate = `invariant:${invariant.name}`;
    tallyCheck(tally, gate, {
      rowsChecked: 0,
      violations: r.violations,
      failure: `invariant ${invariant.name}: partition ${partition.id}: ${r.violations} violating row(s)`,
    });
    if (r.violations > 0 || g.recordPassing) {
      await recordCheck(g, {
        gate,
        partitionId: partition.id,
        rowsChecked: 0,
        violations: r.violations,
        examples: r.examples.join('\n') || undefined,
        startedAt: started,
      });
    }
  }
  return findings;
}

/** What one partition's checks found, row data included (ledger and operator only). */
export interface PartitionFindings {
  comparison?: Comparison;
  invariants: InvariantResult[];
}

/** Run-scope invariants, once, over the whole scope. */
export async function checkRunInvariants(g: GateContext, tally: GateTally): Promise<InvariantResult[]> {
  const results: InvariantResult[] = [];
  for (const invariant of invariantsFor(g.ctx.spec.validate?.invariants, 'run')) {
    const started = Date.now();
    const r = await checkInvariant(g.pool, g.ctx.compiled, invariant, null, g.timeoutMs);
    results.push(r);
    const gate = `invariant:${invariant.name}`;
    tallyCheck(tally, gate, { rowsChecked: 0, violations: r.violations, failure: `invariant ${invariant.name} (whole run): ${r.violations} violating row(s)` });
    await recordCheck(g, {
      gate,
      partitionId: null,
      rowsChecked: 0,
      violations: r.violations,
      examples: r.examples.join('\n') || undefined,
      startedAt: started,
    });
  }
  return results;
}

/** One row per gate in sum (partition NULL), so the ledger says every gate ran, even where nothing failed. */
export async function recordTally(g: GateContext, tally: GateTally, extra: Record<string, { passed: boolean; violations: number }> = {}): Promise<void> {
  for (const [gate, t] of Object.entries(tally.gates)) {
    if (gate.startsWith('distribution:')) continue; // recorded with its measures already
    if (gate.startsWith('invariant:') && invariantsFor(g.ctx.spec.validate?.invariants, 'run').some((i) => `invariant:${i.name}` === gate)) continue; // recorded whole already
    await recordCheck(g, { gate: `${g.stageLabel ?? ''}${gate}`, partitionId: null, rowsChecked: t.rowsChecked, violations: t.violations });
  }
  for (const [gate, r] of Object.entries(extra)) {
    await recordGate(g.pool, {
      runId: g.runId,
      attempt: g.attempt,
      stage: g.stage,
      gate: `${g.stageLabel ?? ''}${gate}`,
      partitionId: null,
      passed: r.passed,
      rowsChecked: 0,
      violations: r.violations,
      durationMs: 0,
    });
  }
}

export async function typesFor(g: GateContext): Promise<string[] | undefined> {
  return g.sampleEvery > 0 ? outputTypes(g.pool, g.ctx) : undefined;
}

/** Fewer keys than this make a slice too thin to mean anything. */
const MIN_SLICE_ROWS = 64;

/**
 * The sample the final check reads from a partition: one contiguous slice of its keys, 1/n of
 * its rows (at least MIN_SLICE_ROWS), starting where one of its chunks started — which chunk is
 * fixed by the partition's id. Reading a slice costs 1/n of the partition; a sample spread by
 * hashing every key would read all of it. Deterministic: the same ledger, the same slice.
 */
export async function sampleSlice(db: pg.Pool, runId: string, partitionId: string, sampleEvery: number): Promise<{ cursor: string | null; rows: number }> {
  const rows = await chunkStarts(db, runId, partitionId);
  const total = rows.reduce((n, r) => n + Number(r.rows_read), 0);
  const size = Math.max(MIN_SLICE_ROWS, Math.ceil(total / sampleEvery));
  if (rows.length === 0) return { cursor: null, rows: size };
  const chunk = rows[parseInt(fnv1a(partitionId), 16) % rows.length];
  return { cursor: chunk.key_from, rows: size };
}
