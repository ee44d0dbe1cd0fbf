/**
 * A TypeScript transform's output rows into the session's output table: the source rows read
 * into Node a slice at a time (slices.ts) and sent back as COPY text where that provably means
 * what JSON means (copy-text.ts), else as the slice's JSON document — both into the same table,
 * where a row means the same either way. A chunk fills it to write; a check fills it, in its
 * read-only transaction (the table is temporary), to compare. Row values never reach an error's
 * summary, only its message (the ledger).
 */
import type { ResolvedSpec } from '../specs/resolve';
import { finished } from 'node:stream/promises';
import { types } from 'node:util';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { CompiledRun } from '../compiler/statements';
import type { RunRow } from '../ledger/runs';
import { transformLabel } from '../domain/labels';
import type { PartitionBounds } from '../domain/types';
import { copyText } from './copy-text';
import type { TransformModule } from './define';
import { isThenable, sliceRowsFor, transformSlices } from './slices';
import { TransformError } from './transform-error';

/** What a session knows of its output table once it has one. */
export interface OutputTable {
  /** Its columns may take COPY text: asked of the catalog once per session. */
  takesCopy?: boolean;
}

/** What filling from a module needs of a run. */
export interface ModuleRun {
  run: Pick<RunRow, 'shape' | 'transform_name' | 'transform_version'>;
  spec: ResolvedSpec;
  compiled: CompiledRun;
  module: TransformModule;
}

/** Fills the session's output table (compiled.outputTable) with the transformed rows of (cursor, hi]; returns how many. */
export async function fillFromModule(
  client: pg.ClientBase,
  ctx: ModuleRun,
  table: OutputTable,
  bounds: PartitionBounds,
  cursor: string | null,
  hi: string | null,
): Promise<number> {
  const { compiled, module } = ctx;
  const label = transformLabel({ name: ctx.run.transform_name, version: ctx.run.transform_version });
  // asked before the read: the session is busy with it until its last row
  table.takesCopy ??= (await client.query<{ ok: boolean }>(compiled.outputTakesCopy.text, compiled.outputTakesCopy.values)).rows[0].ok;
  const columns = ctx.run.shape.outputColumns;
  const copies: Buffer[] = [];
  const documents: string[] = [];
  const take = (returned: unknown): void => {
    const out = arrayOfRows(label, returned);
    if (out.length === 0) return;
    // a value's toJSON or a getter may throw while either encoding reads it: the same error
    const body = serialized(label, () => (table.takesCopy ? copyText(out, columns) : null) ?? JSON.stringify(out));
    if (typeof body === 'string') documents.push(body);
    else copies.push(body);
  };
  const read = compiled.readChunk(bounds, cursor, hi, module.reads);
  await transformSlices(client, read, sliceRowsFor(ctx.spec.target.mode), guarded(label, module), take);
  // a slice COPY text cannot carry goes as its JSON document: both fill the same table, and a row
  // means the same either way (transforms/copy-text.ts)
  let rowsOut = 0;
  if (copies.length > 0) {
    const copy = client.query(copyFrom(compiled.fillFromCopy));
    for (const body of copies) copy.write(body);
    copy.end();
    await finished(copy);
    rowsOut += copy.rowCount;
  }
  for (const document of documents) {
    const fill = compiled.fillFromJson(document);
    rowsOut += (await client.query(fill.text, fill.values)).rowCount ?? 0;
  }
  return rowsOut;
}

/**
 * The transformed rows of (cursor, hi] themselves, for reads that need them as one JSON document
 * (a check on a session without the output table, `plan`'s samples): read and transformed as a
 * chunk does it.
 */
export async function moduleOutput(
  client: pg.ClientBase,
  ctx: ModuleRun,
  bounds: PartitionBounds,
  cursor: string | null,
  hi: string | null,
): Promise<unknown[]> {
  const read = ctx.compiled.readChunk(bounds, cursor, hi, ctx.module.reads);
  const label = transformLabel({ name: ctx.run.transform_name, version: ctx.run.transform_version });
  const all: unknown[] = [];
  await transformSlices(client, read, sliceRowsFor(ctx.spec.target.mode), guarded(label, ctx.module), (out) => {
    for (const row of arrayOfRows(label, out)) all.push(row);
  });
  return all;
}

/** The module's transform, its errors as TransformError: the message for the ledger, a summary free of row values. */
function guarded(label: string, module: TransformModule): (rows: Record<string, unknown>[]) => unknown {
  return (rows) => {
    try {
      const out = module.transform(rows);
      return isThenable(out) ? Promise.resolve(out).catch((err) => Promise.reject(threw(label, err))) : out;
    } catch (err) {
      throw threw(label, err);
    }
  };
}

function arrayOfRows(label: string, out: unknown): unknown[] {
  if (Array.isArray(out)) return out;
  const message = `transform ${label} returned ${typeof out}, not an array of rows`;
  throw new TransformError(message, message);
}

function threw(label: string, err: unknown): TransformError {
  return new TransformError(`transform ${label} threw: ${(err as Error)?.message}`, `transform ${label} threw ${errorName(err)}`);
}

function serialized<T>(label: string, encode: () => T): T {
  try {
    return encode();
  } catch (err) {
    const fix = "return bigint and binary values as strings (bytea as '\\x…' hex)";
    throw new TransformError(
      `transform ${label} returned a value JSON cannot carry (${(err as Error).message}); ${fix}`,
      `transform ${label} returned a value JSON cannot carry; ${fix}`,
    );
  }
}

function errorName(err: unknown): string {
  // isNativeError, not instanceof: an Error from another realm (a vm context) is an Error too
  return types.isNativeError(err) ? err.name || 'an Error' : `a thrown ${typeof err}`;
}
