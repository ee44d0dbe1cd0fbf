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
