/**
 * A spec checked without a database (`backfill validate`): what can be known from the file
 * alone — YAML, the schema, every piece of SQL through the PostgreSQL parser, a module
 * transform bundled from the worker's point of view — and a plain list of what only `plan`
 * can check, against the database the spec names. Any problem is a SpecError (exit 2).
 */
import { parseSpecSql } from '../preflight/check-and-plan';
import { SpecError } from '../specs/errors';
import { loadSpecFile } from '../specs/load';

export interface OfflineVerdict {
  file: string;
  name: string;
  specHash: string;
  transform: { name: string; version: number; kind: 'sql' | 'module' };
  /** What was checked here. */
  checked: string[];
  /** What needs the database: `backfill plan` checks it. */
  notChecked: string[];
  /** Tables and functions a SQL transform reads besides its chunk, as written. */
  reads: { tables: string[]; functions: string[] } | null;
}

export async function validateSpecOffline(file: string): Promise<OfflineVerdict> {
  const loaded = loadSpecFile(file);
  const spec = loaded.resolved;
  const parsed = await parseSpecSql(spec);
  if (!parsed.ok) throw new SpecError(file, parsed.problems);
  const sqlFields = [
    ...(spec.source.where ? ['source.where'] : []),
    ...(spec.transform.sql ? ['transform.sql'] : []),
    ...(spec.limits.guards ? ['limits.guards'] : []),
    ...(spec.validate?.invariants?.length ? ['validate.invariants'] : []),
    ...((spec.after ?? []).some((a) => a.action === 'sql') ? ['after (sql)'] : []),
  ];
  return {
    file,
    name: spec.name,
    specHash: loaded.specHash,
    transform: { name: loaded.transform.name, version: loaded.transform.version, kind: loaded.transform.kind },
    checked: [
      'YAML and every field against the spec schema',
      ...(sqlFields.length > 0 ? [`SQL, through the PostgreSQL parser: what each field allows (${sqlFields.join(', ')})`] : []),
      ...(loaded.transform.kind === 'module' ? ['the transform module: found, bundled, and frozen by hash'] : []),
    ],
    notChecked: [
      `that ${spec.database} reaches a database, and which`,
      `that ${spec.source.table} and ${spec.target.table} exist with the named key, partition and output columns, of types that work`,
      'the functions the SQL calls: that they exist, and are not volatile unless declared',
      'the partitions, the rows in scope and the estimates',
    ],
    reads: parsed.reads ? { tables: parsed.reads.tables, functions: parsed.reads.functions } : null,
  };
}
