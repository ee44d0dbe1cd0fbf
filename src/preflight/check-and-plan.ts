/**
 * Check a spec against its database and plan its partitions: the one path both `plan` /
 * `start` (before anything is written) and the registerRun activity (before the run is
 * recorded) take, so both refuse the same specs with the same problems. ResolvedSpec SQL is parsed
 * first (nothing reaches the database unless it parses as what its field allows); every
 * query after that runs read-only, time-limited and rolled back. Problems are returned,
 * not thrown: each caller turns them into its own kind of error.
 */
import type pg from 'pg';
import { planPartitions, PlanError } from '../compiler/plan-partitions';
import type { PlannedPartition } from '../domain/types';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import type { ResolvedSpec } from '../specs/resolve';
import { inspectSpec } from './inspect';
import { quoteTable } from '../db/sql';
import { inReadOnlyCheck, querySingle } from '../db/session';
import { stripTrailingSemicolons } from '../compiler/statements';
import { volatileRoutines } from './volatility';
import type { RunShape } from '../compiler/shape';
import { readSourceFacts } from './source-facts';
import { envSettings } from '../util/env-settings';
import { privilegeProblem, rolePosture, rowSecurityProblems, type RolePosture } from './role-posture';
import { checkAfterSql, checkGuardSql, checkInvariantSql, checkTransformSql, checkWhere, guardSql, loadSqlParser, type SqlReads } from './spec-sql';

export type CheckedPlan = { ok: true; shape: RunShape; partitions: PlannedPartition[]; role: RolePosture } | { ok: false; problems: SpecProblem[] };

export async function checkAndPlan(pool: pg.Pool, spec: ResolvedSpec, transform: FrozenTransform): Promise<CheckedPlan> {
  const parsed = await parseSpecSql(spec);
  if (!parsed.ok) return parsed;
  const inspected = await inspectSpec(pool, spec, transform);
  if (!inspected.ok) return inspected;
  try {
    return await inReadOnlyCheck(pool, async (client): Promise<CheckedPlan> => {
      const volatility = await checkVolatility(client, spec, parsed);
      if (!volatility.ok) return volatility;
      const role = await rolePosture(client);
      const privilege = privilegeProblem(role, envSettings().BACKFILL_REQUIRE_LEAST_PRIVILEGE);
      const filtered = [...(privilege ? [privilege] : []), ...(await rowSecurityProblems(client, spec, role.role))];
      if (filtered.length > 0) return { ok: false, problems: filtered };
      const declared = await checkDeclaredColumns(client, spec);
      if (declared.length > 0) return { ok: false, problems: declared };
      const shape: RunShape = volatility.reads ? { ...inspected.shape, transformReads: volatility.reads } : inspected.shape;
      const facts = await readSourceFacts(client, spec, inspected.shape.partitionColumnType);
      const partitions = planPartitions(spec.partition, facts);
      if (partitions.length === 0) {
        const [path, what] = spec.source.where
          ? ['source.where', `selects no rows of ${spec.source.table}`]
          : ['source.table', `${spec.source.table} has no rows`];
        return { ok: false, problems: [{ path, message: `${what}: there is nothing to backfill; check the filter and the database the spec names` }] };
      }
      return { ok: true, shape, partitions, role };
    });
  } catch (err) {
    if (err instanceof PlanError) return { ok: false, problems: [{ path: err.field, message: err.message }] };
    throw err;
  }
}

type ParsedSpecSql = { ok: true; reads?: SqlReads; whereRoutines?: { functions: string[]; operators: string[] } };

/**
 * Volatile functions make a transform's output differ between retries and re-runs, and a
 * filter's scope shift under the run: refused, unless the transform declares them.
 */
async function checkVolatility(
  client: pg.PoolClient,
  spec: ResolvedSpec,
  parsed: ParsedSpecSql,
): Promise<{ ok: true; reads?: SqlReads } | { ok: false; problems: SpecProblem[] }> {
  const problems: SpecProblem[] = [];
  let reads = parsed.reads;
  if (parsed.whereRoutines) {
    const volatile = await volatileRoutines(client, parsed.whereRoutines);
    if (volatile.length > 0) {
      problems.push({
        path: 'source.where',
        message: `calls volatile ${volatile.join(', ')}: the scope would change while the run walks it; filter on stored values and stable functions such as now() only`,
      });
    }
  }
  if (reads) {
    const volatile = await volatileRoutines(client, { functions: reads.functions, operators: reads.operators ?? [] });
    if (volatile.length > 0 && !spec.transform.allowVolatile) {
      problems.push({
        path: 'transform.sql',
        message:
          `calls volatile ${volatile.join(', ')}: it returns something new on every call, so a retried or re-run chunk would write different values; ` +
          'compute the value from the row instead (e.g. md5(c.id::text) for a stable pseudo-random value), or declare transform.allowVolatile: true (recorded in the run)',
      });
    }
    if (volatile.length > 0) reads = { ...reads, volatile };
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, reads };
}

/** Every piece of SQL in the spec, through the PostgreSQL parser: what each field allows, nothing more. */
export async function parseSpecSql(
  spec: Pick<ResolvedSpec, 'source' | 'transform' | 'limits' | 'validate' | 'after'>,
): Promise<ParsedSpecSql | { ok: false; problems: SpecProblem[] }> {
  await loadSqlParser();
  const problems: SpecProblem[] = [];
  let reads: SqlReads | undefined;
  let whereRoutines: ParsedSpecSql['whereRoutines'];
  if (spec.source.where) {
    const where = checkWhere(spec.source.where);
    if (where.ok) whereRoutines = where.routines;
    else problems.push({ path: 'source.where', message: where.message });
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
  (spec.validate?.invariants ?? []).forEach((invariant, i) => {
    const verdict = checkInvariantSql(invariant.sql);
    if (!verdict.ok) problems.push({ path: `validate.invariants.${i}.sql`, message: verdict.message });
  });
  (spec.after ?? []).forEach((action, i) => {
    if (action.action !== 'sql') return;
    const verdict = checkAfterSql(action.sql);
    if (!verdict.ok) problems.push({ path: `after.${i}.sql`, message: verdict.message });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, reads, whereRoutines };
}

/** validate.distributions names target columns; validate.invariants must compile (planned, never run) against the source's shape. */
async function checkDeclaredColumns(client: pg.PoolClient, spec: ResolvedSpec): Promise<SpecProblem[]> {
  const problems: SpecProblem[] = [];
  const columns = (spec.validate?.distributions ?? []).map((d) => d.column);
  if (columns.length > 0) {
    const { rows } = await client.query<{ attname: string }>(
      'SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped',
      [quoteTable(spec.target.table)],
    );
    const have = new Set(rows.map((r) => r.attname));
    columns.forEach((c, i) => {
      if (!have.has(c))
        problems.push({ path: `validate.distributions.${i}.column`, message: `${spec.target.table} has no column ${c}; name a column of the target` });
    });
  }
  for (const [i, invariant] of (spec.validate?.invariants ?? []).entries()) {
    // EXPLAIN plans without running: unknown tables, columns and type errors surface here, not at the end of the run
    const statement = compileInvariantForCheck(spec, invariant.sql);
    await client.query('SAVEPOINT invariant_check');
    try {
      await querySingle(client, `EXPLAIN ${statement}`);
      await client.query('RELEASE SAVEPOINT invariant_check');
    } catch (err) {
      await client.query('ROLLBACK TO SAVEPOINT invariant_check');
      problems.push({ path: `validate.invariants.${i}.sql`, message: `does not run against the database: ${(err as Error).message}` });
    }
  }
  return problems;
}

/** The invariant with `source_rows` over the source's rows (no bounds: only its shape matters to EXPLAIN). */
function compileInvariantForCheck(spec: ResolvedSpec, sql: string): string {
  const where = spec.source.where ? ` WHERE (${spec.source.where}\n)` : '';
  return `WITH source_rows AS (SELECT s.* FROM ${quoteTable(spec.source.table)} s${where}) SELECT count(*) FROM (${stripTrailingSemicolons(sql)}\n) v`;
}
