/**
 * Whether source.key can be walked by keyset chunks: its columns exist, each has a total sort
 * order, none is in a nondeterministic collation, some unique index covers no column outside
 * them, and no row in scope has a NULL in any of them. Each problem names the fix.
 */
import type pg from 'pg';
import { pasteableName, quoteIdent, quoteTable } from '../db/sql';
import { querySingle } from '../db/session';
import type { ResolvedSpec } from '../specs/resolve';
import { missingColumn, nondeterministicKey, type TableInfo } from './table-info';

export async function sourceKeyProblems(client: pg.PoolClient, spec: ResolvedSpec, source: TableInfo): Promise<string[]> {
  const problems: string[] = [];
  const keyColumns = spec.source.key;
  const keyTypes = keyColumns.map((k) => source.columns.get(k));
  const nullable = keyColumns.filter((k) => !source.notNull.has(k));
  if (new Set(keyColumns).size !== keyColumns.length) {
    problems.push(`names a column twice (${keyColumns.join(', ')}); list each key column once`);
  } else if (keyTypes.some((type) => !type)) {
    for (const k of keyColumns.filter((_, i) => !keyTypes[i])) problems.push(missingColumn(k, spec.source.table, source));
  } else if (keyColumns.some((k) => !source.walkable.has(k))) {
    for (const k of keyColumns.filter((c) => !source.walkable.has(c))) {
      problems.push(
        `${k} is ${source.columns.get(k)}, which keyset chunks cannot walk (${/^(real|double precision)/.test(source.columns.get(k)!) ? 'a floating-point key is approximate' : 'the type has no total sort order'}); ` +
          'key on a unique column of an integer, numeric, text, uuid, date or timestamp type instead',
      );
    }
  } else if (keyColumns.some((k) => source.nondeterministic.has(k))) {
    problems.push(
      nondeterministicKey(
        keyColumns.filter((k) => source.nondeterministic.has(k)),
        spec.source.table,
        source,
      ),
    );
  } else if (!keyIsUnique(keyColumns, source)) {
    problems.push(notUniqueAdvice(keyColumns, spec.source.table, source));
  } else if (nullable.length > 0 && (await hasNullKeys(client, spec, nullable))) {
    // a unique index admits any number of NULLs, and a keyset cursor can never pass one
    const isNull = nullable.map((k) => `${k} IS NOT NULL`).join(' AND ');
    problems.push(
      `${nullable.join(', ')} ${nullable.length === 1 ? 'is' : 'are'} NULL in some rows in scope, and keyset chunks cannot walk NULL keys (those rows would never be read); ` +
        `exclude them with source.where (${isNull}), or give them keys and add NOT NULL`,
    );
  }

  return problems;
}

/** Keyset chunks need the key's columns to identify one row: some unique index covers no column outside them. */
function keyIsUnique(key: string[], info: TableInfo): boolean {
  return info.uniqueKeys.some((k) => k.every((c) => key.includes(c)));
}

/** Why `key` cannot walk `table`, and the key (or index) that would. */
function notUniqueAdvice(key: string[], table: string, info: TableInfo): string {
  const named = key.length === 1 ? key[0] : `(${key.join(', ')})`;
  const wider = info.uniqueKeys.filter((k) => key.every((c) => k.includes(c))).sort((a, b) => a.length - b.length)[0];
  const asSpec = (cols: string[]) => (cols.length === 1 ? cols[0] : `[${cols.join(', ')}]`);
  if (wider) return `${named} is not unique on ${table}, but (${wider.join(', ')}) is: set source.key: ${asSpec(wider)}`;
  const index = `CREATE UNIQUE INDEX ON ${pasteableName(table)} (${key.map(pasteableName).join(', ')})`;
  const missing = info.partitionKey.filter((c) => !key.includes(c));
  if (missing.length > 0) {
    // PostgreSQL refuses a unique index on a partitioned table that leaves out its partition key
    return (
      `${named} has no unique index on ${table}, a partitioned table whose unique indexes must include its partition key (${info.partitionKey.join(', ')}); ` +
      `name a unique key that includes it (source.key: ${asSpec([...key, ...missing])}), with its index if it has none: CREATE UNIQUE INDEX ON ${pasteableName(table)} (${[...key, ...missing].map(pasteableName).join(', ')})`
    );
  }
  return `${named} has no unique index on ${table}; keyset chunks need one: ${index}`;
}

async function hasNullKeys(client: pg.PoolClient, spec: ResolvedSpec, columns: string[]): Promise<boolean> {
  const where = spec.source.where ? ` AND (${spec.source.where}\n)` : '';
  await client.query('SAVEPOINT null_keys');
  try {
    const { rows } = await querySingle<{ e: boolean }>(
      client,
      `SELECT EXISTS (SELECT 1 FROM ${quoteTable(spec.source.table)} s WHERE (${columns.map((c) => `s.${quoteIdent(c)} IS NULL`).join(' OR ')})${where}) AS e`,
    );
    await client.query('RELEASE SAVEPOINT null_keys');
    return rows[0].e;
  } catch {
    // a where filter that does not compile is reported by its own check below
    await client.query('ROLLBACK TO SAVEPOINT null_keys');
    return false;
  }
}
