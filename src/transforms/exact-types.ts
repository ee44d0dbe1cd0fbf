import pg from 'pg';

/**
 * Rows handed to a TypeScript transform keep their exact values: timestamps and dates stay
 * PostgreSQL text (a JS Date would drop microseconds, so every row would differ from its
 * stored value and be rewritten on every run); bigint and numeric stay strings as usual.
 */
// int8 (20) is here only for speed: pg's own parser tests each value against a regex and returns
// the same string either way
const TEXT_OIDS = new Set([20, 1082, 1114, 1184, 1083, 1266]);
export const EXACT_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    TEXT_OIDS.has(oid) ? (value: string) => value : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};
