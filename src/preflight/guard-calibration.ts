/**
 * `plan --measure-guards`: every guard of a spec read several times before the run, as a worker
 * reads them before each chunk, and held against its thresholds. A soft threshold under what
 * the guard reads on the database as it is now slows the run from its first chunk, whatever the
 * run does: the run crawls, and nothing says it is the threshold's fault. Measured here, it is
 * said before anything starts, with the quiet readings to set it from. The commitMs guard is
 * always measured (it is the one the docs recommend), so a spec without it gets a threshold to
 * start with.
 */
import type pg from 'pg';
import type { GuardsSpec, Threshold } from '../domain/guards';
import { settledPace } from '../governor';
import { commitProbesExist } from '../ledger/commit-probes';
import { readGuards } from './guard-signals';

/** Readings per guard, and the pause between them: a few seconds of the database as it is. */
export const CALIBRATION_READINGS = 30;
const CALIBRATION_SPACING_MS = 100;
/** The hard threshold suggested for commitMs, as a multiple of the soft one: hold only when commits are far slower than usual. */
const SUGGESTED_HARD_FACTOR = 20;
/** Writing less of the time than this before the run has written anything is a threshold set too low, not a busy database. */
const CRAWLING = 0.9;

export interface MeasuredGuard {
  guard: string;
  readings: number;
  p50: number;
  p90: number;
  p95: number;
  max: number;
  soft?: number;
  hard?: number;
  /** Readings over soft (and not over hard), over hard. */
  overSoft: number;
  overHard: number;
  /** With readings like these, the share of time a partition would write (the governor's settled pace). */
  writing: number;
  /** …and the share of it with every partition of limits.concurrency writing at once. */
  allWriting: number;
  /** What the operator should change before starting, when the readings say the run would crawl or hold. */
  advice?: string;
}

export interface GuardCalibration {
  readings: number;
  seconds: number;
  /** The run's limits.concurrency, which the shares of time writing assume. */
  concurrency: number;
  guards: MeasuredGuard[];
  /** commitMs thresholds from the quiet readings, for a spec that has none (see suggestCommitMs). */
  suggestedCommitMs?: { soft: number; hard: number };
  /** A guard that could not be read, and why (commitMs before the ledger exists). */
  unmeasured: { guard: string; why: string }[];
}

/** Reads the spec's guards (and commitMs) CALIBRATION_READINGS times, CALIBRATION_SPACING_MS apart, and summarizes each. */
export async function measureGuards(
  pool: pg.Pool,
  guards: GuardsSpec | undefined,
  where: { targetTable: string; databaseVar: string; concurrency: number },
  readings = CALIBRATION_READINGS,
): Promise<GuardCalibration> {
  const { targetTable, databaseVar, concurrency } = where;
  const unmeasured: GuardCalibration['unmeasured'] = [];
  const measured: GuardsSpec = { ...guards };
  // the probe row lives in the ledger: before the first run (or `migrate`) there is nowhere to commit it
  if (await commitProbesExist(pool)) measured.commitMs = guards?.commitMs ?? {};
  else {
    delete measured.commitMs;
    unmeasured.push({
      guard: 'commitMs',
      why: `the ledger is not in this database yet (its probe row lives there): run backfill migrate --database ${databaseVar}, then plan again`,
    });
  }
  const values = new Map<string, number[]>();
  // plan's session is new, a worker's has read its guards before: its first reading (the
  // catalogs loaded, the probe's plan made) would count a cost the run's readings never pay
  await readGuards(pool, measured, targetTable);
  const started = performance.now();
  for (let i = 0; i < readings; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, CALIBRATION_SPACING_MS));
    for (const r of await readGuards(pool, measured, targetTable)) values.set(r.guard, [...(values.get(r.guard) ?? []), r.value]);
  }
  const thresholds = thresholdsOf(guards);
  const summaries = [...values].map(([guard, v]) => summarizeGuard(guard, v, thresholds.get(guard) ?? {}, concurrency));
  const commit = summaries.find((s) => s.guard === 'commitMs');
  return {
    readings,
    seconds: Math.round(performance.now() - started) / 1000,
    concurrency,
    guards: summaries,
    ...(commit && !guards?.commitMs ? { suggestedCommitMs: suggestCommitMs(commit, concurrency) } : {}),
    unmeasured,
  };
}

/** Each guard's thresholds, by the name its readings carry. */
function thresholdsOf(guards: GuardsSpec | undefined): Map<string, Threshold> {
  const named = new Map<string, Threshold>();
  if (!guards) return named;
  for (const [name, t] of Object.entries(guards)) {
    if (name === 'custom') for (const c of guards.custom ?? []) named.set(c.name, c);
    else if (typeof t === 'object' && t !== null) named.set(name, t as Threshold);
  }
  return named;
}

/** One guard's readings against its thresholds, with advice where a run would crawl or hold from its start. Pure. */
export function summarizeGuard(guard: string, values: number[], t: Threshold, concurrency = 1): MeasuredGuard {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const overHard = t.hard === undefined ? 0 : sorted.filter((v) => v > t.hard!).length;
  const overSoft = t.soft === undefined ? 0 : sorted.filter((v) => v > t.soft! && (t.hard === undefined || v <= t.hard)).length;
  const n = Math.max(1, sorted.length);
  const { writing, allWriting } = settledPace(overSoft / n);
  const m: MeasuredGuard = {
    guard,
    readings: sorted.length,
    p50: figure(at(0.5)),
    p90: figure(at(0.9)),
    p95: figure(at(0.95)),
    max: figure(at(1)),
    // the thresholds alone: a probe's or a custom guard's SQL stays in the spec
    ...(t.soft !== undefined ? { soft: t.soft } : {}),
    ...(t.hard !== undefined ? { hard: t.hard } : {}),
    overSoft,
    overHard,
    writing: share(writing),
    allWriting: share(allWriting),
  };
  const quiet = `it reads ${m.p50} (median) and ${m.p90} (p90) now`;
  const level = softLevel(m, concurrency);
  const raise = `set soft at or above the quiet ${level.name} (${level.value})`;
  const overSoftBefore = `${guard} read over soft ${t.soft} in ${overSoft} of ${n} readings before the run wrote anything (${quiet}): `;
  if (overHard > 0) {
    m.advice = `${guard} read over hard ${t.hard} in ${overHard} of ${n} readings before the run wrote anything (${quiet}): the run would hold; raise hard above what the database reads at its busiest, or start when it is quieter`;
  } else if (writing < CRAWLING) {
    m.advice =
      overSoftBefore + `the run would write one partition at a time, about ${percent(writing)} of the time, whatever it does to the database; ` + raise;
  } else if (concurrency > 1 && allWriting < CRAWLING / 2) {
    m.advice =
      overSoftBefore +
      `each of them makes the run write one partition at a time for the next ten readings, so its ${concurrency} partitions would write at once only about ${percent(allWriting)} of the time; ` +
      `${raise}, or limits.concurrency 1 if one at a time is what the database can spare`;
  }
  return m;
}

/**
 * Soft at the quiet p90, as docs/capacity.md recommends for one partition at a time; with more,
 * at the p95, so that the partitions still write at once most of the time; hard far above it.
 */
export function suggestCommitMs(quiet: Pick<MeasuredGuard, 'p90' | 'p95'>, concurrency: number): { soft: number; hard: number } {
  const soft = Math.max(0.1, figure(softLevel(quiet, concurrency).value));
  return { soft, hard: figure(soft * SUGGESTED_HARD_FACTOR) };
}

/** The quiet reading a soft threshold should sit at: the p90 for one partition at a time, the p95 for more (suggestCommitMs). */
function softLevel(quiet: Pick<MeasuredGuard, 'p90' | 'p95'>, concurrency: number): { name: string; value: number } {
  return concurrency > 1 ? { name: 'p95', value: quiet.p95 } : { name: 'p90', value: quiet.p90 };
}

function share(v: number): number {
  return Math.round(v * 100) / 100;
}

function percent(v: number): string {
  return `${Math.round(v * 100)} %`;
}

/** Three significant digits: readings are ms, seconds, ratios and counts alike. */
function figure(v: number): number {
  return Number(v.toPrecision(3));
}
