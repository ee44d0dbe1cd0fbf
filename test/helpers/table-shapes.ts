/**
 * Tables of any shape for tests that run the same spec over many: a key of one or several
 * columns of any type and collation, plain or declaratively partitioned, with quoted
 * mixed-case names. Each source `public."<name>"` holds its key, "createdAt", "Tenant" and
 * "Amount"; its target `public."<name>Out"` has the key and "Doubled" (the transform the tests
 * run: "Amount" * 2).
 */
import type pg from 'pg';
import type { SpecInput } from '../../src/specs/schema';

export interface TableShape {
  name: string;
  /** Key columns with their types, in key order. */
  key: [string, string][];
  /** Each key column's value for row g (SQL over g). */
  values: string[];
  partition: SpecInput['partition'];
  /** PARTITION BY clause and leaves for a partitioned source; absent for a plain table. */
  partitioned?: { by: string; leaves: string[] };
  partitionedTarget?: boolean;
}

export const q = (name: string) => `"${name}"`;

/** Source columns besides "Amount": the key's, then "createdAt" and "Tenant" unless the key has them. */
function columnsOf(s: TableShape): string[] {
  const keys = s.key.map(([c]) => c);
  return [...keys, ...['createdAt', 'Tenant'].filter((c) => !keys.includes(c))];
}

export async function createShapeTables(pool: pg.Pool, shapes: TableShape[], rows: number): Promise<void> {
  for (const s of shapes) {
    const keys = s.key.map(([c]) => q(c)).join(', ');
    const extra = [
      ['createdAt', 'timestamptz NOT NULL'],
      ['Tenant', 'text NOT NULL'],
    ].filter(([c]) => !s.key.some(([k]) => k === c));
    const cols = [...s.key.map(([c, t]) => `${q(c)} ${t} NOT NULL`), ...extra.map(([c, t]) => `${q(c)} ${t}`), '"Amount" bigint NOT NULL'].join(', ');
    const source = `public.${q(s.name)}`;
    const target = `public.${q(`${s.name}Out`)}`;
    const values: Record<string, string> = { createdAt: "timestamptz '2024-01-01' + g * interval '61 minutes'", Tenant: "'t' || (g % 4)" };
    s.key.forEach(([c], i) => (values[c] = s.values[i]));
    await pool.query(
      `CREATE TABLE ${source} (${cols}, PRIMARY KEY (${keys}))${s.partitioned ? ` PARTITION BY ${s.partitioned.by}` : ''};
       ${(s.partitioned?.leaves ?? []).map((leaf, i) => `CREATE TABLE public.${q(`${s.name}_${i}`)} PARTITION OF ${source} ${leaf};`).join('\n')}
       INSERT INTO ${source} (${columnsOf(s).map(q).join(', ')}, "Amount")
         SELECT ${columnsOf(s)
           .map((c) => values[c])
           .join(', ')}, g * 3 FROM generate_series(1, ${rows}) g;
       CREATE INDEX ON ${source} ("createdAt", ${keys});
       CREATE TABLE ${target} (${s.key.map(([c, t]) => `${q(c)} ${t.replace(/ COLLATE .*/, '')} NOT NULL`).join(', ')}, "Doubled" bigint NOT NULL, PRIMARY KEY (${keys}))${
         s.partitionedTarget
           ? ` PARTITION BY HASH (${q(s.key[0][0])}); CREATE TABLE public.${q(`${s.name}Out_0`)} PARTITION OF ${target} FOR VALUES WITH (MODULUS 2, REMAINDER 0); CREATE TABLE public.${q(`${s.name}Out_1`)} PARTITION OF ${target} FOR VALUES WITH (MODULUS 2, REMAINDER 1)`
           : ''
       };
       ANALYZE ${source};`,
    );
  }
}

/** Rows in which the target differs from "Amount" * 2 of every source row, both ways, in one statement. */
export async function targetDifferences(pool: pg.Pool, s: TableShape): Promise<number> {
  // text keys compared in the target's collation, as the run matched them
  const asTarget = s.key.map(([c, t]) => (t.startsWith('text') ? `${q(c)} COLLATE "default" AS ${q(c)}` : q(c))).join(', ');
  const { rows } = await pool.query<{ n: number }>(`
    WITH expected AS (SELECT ${asTarget}, "Amount" * 2 AS "Doubled" FROM public.${q(s.name)})
    SELECT (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM public.${q(`${s.name}Out`)}) a)::int
         + (SELECT count(*) FROM (SELECT * FROM public.${q(`${s.name}Out`)} EXCEPT SELECT * FROM expected) b)::int AS n`);
  return rows[0].n;
}
