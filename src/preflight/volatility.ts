/**
 * Which of the functions and operators spec SQL calls are VOLATILE (random(), clock_timestamp(),
 * nextval(), set_config(), …): a volatile transform computes different values on every retry
 * and re-run, so its backfill is not idempotent, and a volatile filter changes the scope while
 * the run walks it. Names are resolved as PostgreSQL would (search_path, or the schema written);
 * a name is called volatile when any function or operator it can resolve to is, since the
 * overload chosen depends on argument types the parse tree does not carry. A function
 * declared IMMUTABLE or STABLE is taken at its word.
 */
import type pg from 'pg';

/** `schema.name` or `name` as [schema | null, name]. */
function qualified(names: string[]): [(string | null)[], string[]] {
  const split = names.map((f) => {
    const dot = f.lastIndexOf('.');
    return dot === -1 ? [null, f] : [f.slice(0, dot), f.slice(dot + 1)];
  });
  return [split.map((s) => s[0]), split.map((s) => s[1]!)];
}

export async function volatileRoutines(client: pg.PoolClient, routines: { functions: string[]; operators: string[] }): Promise<string[]> {
  if (routines.functions.length === 0 && routines.operators.length === 0) return [];
  const [fschemas, fnames] = qualified(routines.functions);
  const [oschemas, onames] = qualified(routines.operators);
  const { rows } = await client.query<{ name: string }>(
    `SELECT coalesce(w.schema || '.', '') || w.name || ' (' || p.oid::regprocedure::text || ')' AS name
       FROM unnest($1::text[], $2::text[]) AS w(schema, name)
       JOIN pg_proc p ON p.proname = w.name
       JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE p.provolatile = 'v'
        AND (CASE WHEN w.schema IS NULL THEN pg_function_is_visible(p.oid) ELSE n.nspname = w.schema END)
     UNION
     SELECT 'operator ' || coalesce(w.schema || '.', '') || w.name || ' (' || o.oprcode::regprocedure::text || ')'
       FROM unnest($3::text[], $4::text[]) AS w(schema, name)
       JOIN pg_operator o ON o.oprname = w.name
       JOIN pg_namespace n ON n.oid = o.oprnamespace
       JOIN pg_proc p ON p.oid = o.oprcode
      WHERE p.provolatile = 'v'
        AND (CASE WHEN w.schema IS NULL THEN pg_operator_is_visible(o.oid) ELSE n.nspname = w.schema END)
     ORDER BY 1`,
    [fschemas, fnames, oschemas, onames],
  );
  return rows.map((r) => r.name);
}
