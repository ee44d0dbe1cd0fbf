/**
 * SQL identifier quoting. Spec identifiers are validated as plain names by the schema;
 * quoting them anyway means a name that is also a keyword (`order`, `user`) still works.
 */

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `public.orders` -> `"public"."orders"`; an unqualified name stays unqualified (search_path decides). */
export function quoteTable(name: string): string {
  return name.split('.').map(quoteIdent).join('.');
}

export function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Words PostgreSQL reserves that are also common table and column names: they must be quoted to be names. */
const RESERVED = new Set([
  'all',
  'and',
  'any',
  'asc',
  'case',
  'check',
  'column',
  'default',
  'desc',
  'end',
  'from',
  'group',
  'limit',
  'offset',
  'or',
  'order',
  'primary',
  'references',
  'select',
  'table',
  'to',
  'user',
  'when',
  'where',
]);

/**
 * A name as an operator pastes it into SQL (advice in error messages): a part is quoted only
 * where PostgreSQL would otherwise fold its case or read a keyword — `public.orders`, but
 * `public."User"` and `public."order"`.
 */
export function pasteableName(name: string): string {
  return name
    .split('.')
    .map((part) => (/^[a-z_][a-z0-9_]*$/.test(part) && !RESERVED.has(part) ? part : quoteIdent(part)))
    .join('.');
}

/** The one name in `candidates` that equals `name` but for case, if there is exactly one: what a spec that was case-folded meant. */
export function caseFoldedMatch(name: string, candidates: Iterable<string>): string | undefined {
  const matches = [...candidates].filter((c) => c !== name && c.toLowerCase() === name.toLowerCase());
  return matches.length === 1 ? matches[0] : undefined;
}
