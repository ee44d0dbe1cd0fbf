/**
 * What a careful reviewer would raise before approving a backfill, read from the catalog and
 * the planner (EXPLAIN; nothing runs): triggers and foreign keys on the target that act on
 * every row written, a table the SQL transform reads in full for every chunk (no index on the
 * column it joins on), replication that will ship the run's WAL, and a target already bloated.
 */
import type pg from 'pg';
import { quoteIdent, quoteTable } from '../db/sql';
import type { PlannedPartition } from '../domain/types';
import type { ResolvedSpec } from '../specs/resolve';
import { params, partitionPredicate } from '../compiler/partition-predicate';
import type { RunShape } from '../compiler/shape';
import { stripTrailingSemicolons } from '../compiler/statements';

/** A table read in full per chunk matters from this size on. */
const FULL_SCAN_ROWS = 10_000;
/** Dead rows worth a word: this share of the target, and at least this many. */
const BLOAT_SHARE = 0.2;
const BLOAT_ROWS = 10_000;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Schema?: string;
  'Plan Rows': number;
  Plans?: PlanNode[];
}

export async function reviewWarnings(db: pg.Pool, spec: ResolvedSpec, shape: RunShape, partitions: PlannedPartition[]): Promise<string[]> {
  return [
    ...(await targetSideEffects(db, spec)),
    ...(await fullScansPerChunk(db, spec, shape, partitions)),
    ...(await replication(db, spec)),
    ...(await targetBloat(db, spec)),
  ];
}

async function targetSideEffects(db: pg.Pool, spec: ResolvedSpec): Promise<string[]> {
  const target = quoteTable(spec.target.table);
  const { rows: triggers } = await db.query<{ name: string }>(
    `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal AND (tgtype & 1) = 1 ORDER BY 1`,
    [target],
  );
  const { rows: keys } = await db.query<{ name: string; refers: string }>(
    `SELECT conname AS name, confrelid::regclass::text AS refers FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'f' ORDER BY 1`,
    [target],
  );
  const out: string[] = [];
  if (triggers.length > 0) {
    out.push(
      `target: ${spec.target.table} has row trigger(s) ${triggers.map((t) => t.name).join(', ')}, which run for every row written; ` +
        'their cost is in plan --measure-writes, and every chunk is reconciled row by row because a trigger may rewrite what it writes',
    );
  }
  if (keys.length > 0) {
    out.push(
      `target: ${spec.target.table} has foreign key(s) to ${[...new Set(keys.map((k) => k.refers))].join(', ')}: every row written is looked up there; index the referenced columns`,
    );
  }
  return out;
}

/**
 * The planner's plan for one chunk of the first partition through the SQL transform: a table
 * other than the source read with a sequential scan is read in full for every chunk.
 */
async function fullScansPerChunk(db: pg.Pool, spec: ResolvedSpec, shape: RunShape, partitions: PlannedPartition[]): Promise<string[]> {
  if (!spec.transform.sql || partitions.length === 0) return [];
  const numbered = params();
  const predicate = partitionPredicate(partitions[0].bounds, 's', shape.partitionColumnType, numbered.param, shape.keyType);
  const limit = numbered.param(spec.limits.chunkSize, 'integer');
  const where = spec.source.where ? ` AND (${spec.source.where}\n)` : '';
  const text =
    `EXPLAIN (FORMAT JSON, VERBOSE) WITH chunk AS (SELECT s.* FROM ${quoteTable(spec.source.table)} s WHERE ${predicate}${where} ORDER BY ${spec.source.key
      .map((k) => `s.${quoteIdent(k)}`)
      .join(', ')} LIMIT ${limit}) ` + `SELECT * FROM (${stripTrailingSemicolons(spec.transform.sql)}\n) t`;
  let plan: PlanNode;
  try {
    plan = (await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(text, numbered.values)).rows[0]['QUERY PLAN'][0].Plan;
  } catch {
    return []; // the checks before this one explain a transform that does not plan
  }
  const { rows: source } = await db.query<{ name: string }>('SELECT relname AS name FROM pg_class WHERE oid = $1::regclass', [quoteTable(spec.source.table)]);
  const scans: { table: string; rows: number }[] = [];
  const walk = (n: PlanNode) => {
    if (n['Node Type'] === 'Seq Scan' && n['Relation Name'] && n['Relation Name'] !== source[0]?.name && n['Plan Rows'] >= FULL_SCAN_ROWS) {
      scans.push({ table: `${n.Schema ? `${n.Schema}.` : ''}${n['Relation Name']}`, rows: n['Plan Rows'] });
    }
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(plan);
  return scans.map(
    (s) =>
      `transform: reads ${s.table} (about ${Math.round(s.rows).toLocaleString('en-US')} rows) with a sequential scan for every chunk of ${spec.limits.chunkSize}; ` +
      'index the column the transform joins it on, so each chunk looks up only its rows',
  );
}

async function replication(db: pg.Pool, spec: ResolvedSpec): Promise<string[]> {
  const { rows } = await db.query<{ replicas: number; slots: number }>(
    'SELECT (SELECT count(*) FROM pg_stat_replication)::int AS replicas, (SELECT count(*) FROM pg_replication_slots)::int AS slots',
  );
  const { replicas, slots } = rows[0];
  if (replicas === 0 && slots === 0) return [];
  const guarded = spec.limits.guards?.replicationLagSeconds !== undefined;
  return [
    `database: ${replicas} replica(s) stream from this server${slots > 0 ? ` and ${slots} replication slot(s) hold WAL` : ''}: the run's WAL (plan --measure-writes projects it) is shipped to them` +
      (guarded ? '' : '; add limits.guards.replicationLagSeconds so the run slows down when they fall behind'),
  ];
}

async function targetBloat(db: pg.Pool, spec: ResolvedSpec): Promise<string[]> {
  const { rows } = await db.query<{ live: string; dead: string }>(
    'SELECT n_live_tup AS live, n_dead_tup AS dead FROM pg_stat_all_tables WHERE relid = $1::regclass',
    [quoteTable(spec.target.table)],
  );
  if (!rows[0]) return [];
  const live = Number(rows[0].live);
  const dead = Number(rows[0].dead);
  if (dead < BLOAT_ROWS || dead / Math.max(1, live + dead) < BLOAT_SHARE) return [];
  return [
    `target: ${spec.target.table} already holds about ${dead.toLocaleString('en-US')} dead rows (${Math.round((100 * dead) / (live + dead))} %): ` +
      'VACUUM it before the run; every row the run updates adds another',
  ];
}
