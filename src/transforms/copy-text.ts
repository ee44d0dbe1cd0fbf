/**
 * A TypeScript transform's output rows as COPY text for the chunk's output table: the cheap way
 * in (PostgreSQL reads 100,000 rows of COPY text in about a fifth of the time it takes to parse
 * them from one JSON document: bench/RESULTS.md, "The TypeScript path").
 *
 * The rows mean what `JSON.stringify` then `json_populate_recordset` make of them; that pair is
 * the definition, and this encoder only stands in for it where it provably hands every column
 * the same text. For a column of a plain scalar type (not json or jsonb, not an array or a
 * composite, through any domains: compiler/output-table.ts) and a value that is a string, a
 * finite number, a boolean, a Date or nothing, both give the column's input function the same
 * text, or NULL (NaN and Infinity are NULL, as JSON writes them). Anything else — a nested
 * object, a bigint, a string holding NUL or half a surrogate pair, a row JSON would not read as
 * its own properties, a property JSON would not see — makes `copyText` return null, and the
 * chunk goes through JSON as before, errors and all.
 */
import { types } from 'node:util';

const NEEDS_CARE = /[\0\t\n\r\\\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const isEnumerable = Object.prototype.propertyIsEnumerable;

/** The rows as COPY text, or null where only JSON says exactly what they mean. */
export function copyText(rows: readonly unknown[], columns: readonly string[]): Buffer | null {
  // a column named like Object.prototype's members reads the prototype when a row lacks it
  if (columns.some((c) => c in Object.prototype)) return null;
  // a string per block of rows, encoded once: per field the encoding calls cost more than the
  // text, and one string for the whole chunk makes V8 flatten a rope of a million pieces
  const blocks: Buffer[] = [];
  const last = columns.length - 1;
  let text = '';
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (!isPlainRow(row)) return null;
    for (let i = 0; i <= last; i++) {
      const field = fieldText(row, columns[i]);
      if (field === null) return null;
      text += i === last ? `${field}\n` : `${field}\t`;
    }
    if (r % ROWS_PER_BLOCK === ROWS_PER_BLOCK - 1) {
      blocks.push(Buffer.from(text));
      text = '';
    }
  }
  blocks.push(Buffer.from(text));
  return Buffer.concat(blocks);
}

const ROWS_PER_BLOCK = 2000;

function isPlainRow(row: unknown): row is Record<string, unknown> {
  // no test of the prototype: a module's rows may come from another realm (a vm context), and
  // what JSON reads of an object — its own enumerable properties — fieldText checks one by one
  if (typeof row !== 'object' || row === null || Array.isArray(row) || types.isProxy(row) || types.isBoxedPrimitive(row)) return false;
  // JSON.stringify would call a row's toJSON, own or inherited, instead of reading its properties
  return typeof (row as { toJSON?: unknown }).toJSON !== 'function';
}

/** One value as COPY text (`\N` for NULL), or null when JSON would carry it differently. */
function fieldText(row: Record<string, unknown>, column: string): string | null {
  let v = row[column];
  if (v === undefined) return '\\N';
  // JSON.stringify sees own enumerable properties only; anything else it leaves out (NULL)
  if (!isEnumerable.call(row, column)) return null;
  if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON !== 'function') return null;
    v = toJSON.call(v, column);
    if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') return null;
  }
  switch (typeof v) {
    case 'string':
      return NEEDS_CARE.test(v) ? escaped(v) : v;
    case 'number':
      return Number.isFinite(v) ? String(v) : '\\N';
    case 'boolean':
      return v ? 'true' : 'false';
    default:
      // null, and what JSON leaves out: undefined, functions, symbols
      return '\\N';
  }
}

function escaped(s: string): string | null {
  // JSON would carry NUL as \u0000 and half a surrogate pair escaped, and PostgreSQL refuses
  // both; UTF-8 would turn half a pair into U+FFFD and write it
  if (s.includes('\0') || LONE_SURROGATE.test(s)) return null;
  return s.replace(/[\\\t\n\r]/g, (ch) => ESCAPES[ch]);
}
