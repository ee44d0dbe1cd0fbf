/**
 * The tables a spec names, held against it: source.key walkable and unique, the partition
 * column of a type its partitioning can cut (and the source partitioned, for by: native), the
 * time zone known, the target's key unique and its partition column present (replace mode).
 * Part of inspect.ts.
 */
import type pg from 'pg';
import { pasteableName } from '../db/sql';
import type { SpecProblem } from '../specs/errors';
import type { ResolvedSpec } from '../specs/resolve';
import { sourceKeyProblems } from './source-key';
import { missingColumn, nondeterministicKey, type TableInfo } from './table-info';

const INTEGER_TYPES = ['smallint', 'integer', 'bigint'];
const TIME_TYPES = ['timestamp with time zone', 'timestamp without time zone', 'date'];

/** Integer types of every width, and numeric without a fraction (`numeric(20,0)`): whole-number ranges. */
function isIntegral(type: string): boolean {
  return INTEGER_TYPES.includes(type) || /^numeric\(\d+,\s*0\)$/.test(type);
}

/** A type without its modifier: `timestamp(3) without time zone` -> `timestamp without time zone`; the column's own type (precision kept) is what statements cast to. */
export function baseType(type: string): string {
  return type.replace(/\([\d,\s]+\)/, '');
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/** source.key, and the partition column's type against what its partitioning needs. */
export async function sourceKeyAndColumns(client: pg.PoolClient, spec: ResolvedSpec, source: TableInfo): Promise<SpecProblem[]> {
  const problems = (await sourceKeyProblems(client, spec, source)).map((message) => ({ path: 'source.key', message }));
  const column = spec.partition.column;
  const type = source.baseTypes.get(column);
  const problem = (message: string) => problems.push({ path: 'partition.column', message });
  if (!type) problem(missingColumn(column, spec.source.table, source));
  else if (spec.partition.by === 'range' && spec.partition.size !== undefined && !isIntegral(type))
    problem(
      `${column} is ${type}; by: range with size needs an integer column (use count: N for ranges of about equal rows on any orderable column, by: time for timestamps)`,
    );
  else if (spec.partition.by === 'range' && !source.walkable.has(column))
    problem(`${column} is ${type}, which has no total sort order to cut ranges on; partition by another column`);
  else if (spec.partition.by === 'time' && !TIME_TYPES.includes(baseType(type))) problem(`${column} is ${type}; by: time needs a timestamp or date column`);
  return problems;
}

/** by: native against the source's own partitioning, and a time partition's zone against the server's list. */
export async function partitionProblems(client: pg.PoolClient, spec: ResolvedSpec, source: TableInfo): Promise<SpecProblem[]> {
  const problems: SpecProblem[] = [];
  if (spec.partition.by === 'native') {
    const key = source.partitionKey;
    if (key.length === 0)
      problems.push({ path: 'partition.by', message: `is native, but ${spec.source.table} is not a partitioned table; partition by range, time or list` });
    else if (key.length > 1)
      problems.push({
        path: 'partition.by',
        message:
          `is native, which takes a table partitioned on one column; ${spec.source.table} is partitioned on (${key.join(', ')}): ` +
          `partition by time or range (count: N) on ${key[0]} instead`,
      });
    else if (key[0] !== spec.partition.column) problems.push({ path: 'partition.column', message: `must be ${spec.source.table}'s partition key: ${key[0]}` });
    if (spec.target.mode === 'replace')
      problems.push({
        path: 'partition.by',
        message: 'is native, which replace mode does not take: replace needs bounds on the target; partition by range or time',
      });
  }
  const zone = spec.partition.by === 'time' ? spec.partition.timeZone : undefined;
  if (zone && !(await client.query<{ e: boolean }>('SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $1) AS e', [zone])).rows[0].e) {
    problems.push({ path: 'partition.timeZone', message: `is ${zone}, which this PostgreSQL does not know (pg_timezone_names); use a zone name it lists` });
  }
  return problems;
}

/** target.key present, deterministic and unique; replace mode's partition column present, and as fine as the partitions. */
export function targetProblems(spec: ResolvedSpec, target: TableInfo): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const { key, table } = spec.target;
  for (const k of key) if (!target.columns.has(k)) problems.push({ path: 'target.key', message: missingColumn(k, table, target) });
  const loose = key.filter((k) => target.nondeterministic.has(k));
  if (loose.length > 0) problems.push({ path: 'target.key', message: nondeterministicKey(loose, table, target) });
  if (key.every((k) => target.columns.has(k)) && !target.uniqueKeys.some((u) => sameSet(u, key))) {
    problems.push({
      path: 'target.key',
      message: `(${key.join(', ')}) has no unique index on ${table}; writes match rows by it: CREATE UNIQUE INDEX ON ${pasteableName(table)} (${key.map(pasteableName).join(', ')})`,
    });
  }
  if (spec.target.mode !== 'replace') return problems;
  const pcolType = target.columns.get(spec.target.partitionColumn!);
  if (!pcolType) {
    problems.push({ path: 'target.partitionColumn', message: `names column ${spec.target.partitionColumn}, which ${table} does not have` });
  } else if (spec.partition.by === 'time' && pcolType === 'date' && ['minute', 'hour'].includes(spec.partition.interval.unit)) {
    // a day's row would be computed from a fraction of the day, by each partition in turn
    problems.push({
      path: 'partition.size',
      message: `is ${spec.partition.size}, but target.partitionColumn ${spec.target.partitionColumn} is a date: in replace mode each partition must cover whole days; use size: "1 day" (or weeks, months)`,
    });
  }
  return problems;
}
