/**
 * Check a spec against its database and plan its partitions: the one path both `plan` /
 * `start` (before anything is written) and the registerRun activity (before the run is
 * recorded) take, so both refuse the same specs with the same problems. Spec SQL is parsed
 * first (nothing reaches the database unless it parses as what its field allows); every
 * query after that runs read-only, time-limited and rolled back. Problems are returned,
 * not thrown: each caller turns them into its own kind of error.
 */
import type pg from 'pg';
import { planPartitions, PlanError } from '../planner/partitions';
import type { PlannedPartition } from '../shared/types';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import type { Spec } from '../specs/schema';
import { inspectSpec } from './inspect';
import { inReadOnlyCheck } from './session';
import type { RunShape } from './shape';
import { readSourceFacts } from './source-facts';
import { checkGuardSql, checkTransformSql, checkWhere, guardSql, loadSqlParser, type SqlReads } from './spec-sql';

export type CheckedPlan = { ok: true; shape: RunShape; partitions: PlannedPartition[] } | { ok: false; problems: SpecProblem[] };

export async function checkAndPlan(pool: pg.Pool, spec: Spec, transform: FrozenTransform): Promise<CheckedPlan> {
  const parsed = await parseSpecSql(spec);
  if (!parsed.ok) return parsed;
  const inspected = await inspectSpec(pool, spec, transform);
  if (!inspected.ok) return inspected;
  const shape: RunShape = parsed.reads ? { ...inspected.shape, transformReads: parsed.reads } : inspected.shape;
  try {
    const facts = await inReadOnlyCheck(pool, (client) => readSourceFacts(client, spec));
    return { ok: true, shape, partitions: planPartitions(spec.partition, facts) };
  } catch (err) {
    if (err instanceof PlanError) return { ok: false, problems: [{ path: err.field, message: err.message }] };
    throw err;
  }
}

/** Every piece of SQL in the spec, through the PostgreSQL parser: what each field allows, nothing more. */
export async function parseSpecSql(spec: Pick<Spec, 'source' | 'transform' | 'limits'>): Promise<{ ok: true; reads?: SqlReads } | { ok: false; problems: SpecProblem[] }> {
  await loadSqlParser();
  const problems: SpecProblem[] = [];
  let reads: SqlReads | undefined;
  if (spec.source.where) {
    const where = checkWhere(spec.source.where);
    if (!where.ok) problems.push({ path: 'source.where', message: where.message });
  }
  if (spec.transform.sql) {
    const transform = checkTransformSql(spec.transform.sql);
    if (transform.ok) reads = transform.reads;
    else problems.push({ path: 'transform.sql', message: transform.message });
  }
  for (const [path, sql] of guardSql(spec.limits.guards)) {
    const guard = checkGuardSql(sql);
    if (!guard.ok) problems.push({ path, message: guard.message });
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, reads };
}
