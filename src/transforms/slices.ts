/**
 * A TypeScript transform's rows as they arrive from PostgreSQL, handed to it a slice at a time
 * instead of a chunk at a time. A chunk of 100,000 rows held whole lives through every young-
 * generation collection while it is read and transformed, so V8 copies it twice and marks it
 * once more; a slice of a few thousand rows dies young, where collecting costs nothing. That
 * cuts the worker's CPU a row by a third or more (bench/RESULTS.md, "The TypeScript path").
 *
 * Why a slice may stand for the chunk: in upsert and update modes a chunk's rows are not a unit
 * a transform can rely on — chunk sizes follow live limits and targetChunkSeconds, a retry starts
 * from the checkpoint, and the checks recompute over ranges of their own — so each output row
 * must already depend only on its own input row. Replace mode computes a rollup over its whole
 * partition: it asks for one slice of every row.
 */
import pg from 'pg';
import { EXACT_TYPES } from './exact-types';

/** Rows per call in upsert and update modes: ~2–5 k rows keep a slice in V8's young generation. */
export const ROWS_PER_SLICE = 4096;

/** How many rows a call gets in a write mode: replace mode computes its partition whole. */
export function sliceRowsFor(mode: 'upsert' | 'update' | 'replace'): number {
  return mode === 'replace' ? Infinity : ROWS_PER_SLICE;
}

export type Transform = (rows: Record<string, unknown>[]) => unknown;

/**
 * Reads `read`'s rows and hands them to `transform` in slices of `sliceRows` (in the order read;
 * once with no rows when there are none), then each slice's result to `take`, one slice after
 * another, never two calls of the transform at once. Resolves with the rows read once the last
 * `take` returned; rejects with the statement's error, or the first error the transform or
 * `take` threw (the statement then runs to its end, ignoring the rest of its rows, so the
 * session stays usable).
 */
export function transformSlices(
  client: pg.ClientBase,
  read: { text: string; values: unknown[] },
  sliceRows: number,
  transform: Transform,
  take: (out: unknown) => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let slice: Record<string, unknown>[] = [];
    let rowsRead = 0;
    let calls = 0;
    let failed: { err: unknown } | undefined;
    // an async transform's slices wait for the one before: results keep their order
    let pending: Promise<void> | undefined;

    const run = (rows: Record<string, unknown>[]): void => {
      calls++;
      if (pending) {
        pending = pending.then(async () => take(await transform(rows)));
        pending.catch(fail);
        return;
      }
      try {
        const out = transform(rows);
        if (isThenable(out)) {
          pending = Promise.resolve(out).then(take);
          pending.catch(fail);
        } else take(out);
      } catch (err) {
        fail(err);
      }
    };
    const fail = (err: unknown): void => {
      failed ??= { err };
      slice = [];
    };

    const query = new pg.Query({ text: read.text, values: read.values, types: EXACT_TYPES });
    query.on('row', (row: Record<string, unknown>) => {
      if (failed) return;
      rowsRead++;
      slice.push(row);
      if (slice.length >= sliceRows) {
        const full = slice;
        slice = [];
        run(full);
      }
    });
    query.on('error', (err) => reject(failed ? failed.err : err));
    query.on('end', () => {
      if (!failed && (slice.length > 0 || calls === 0)) run(slice);
      slice = [];
      Promise.resolve(pending).then(
        () => (failed ? reject(failed.err) : resolve(rowsRead)),
        () => reject(failed!.err),
      );
    });
    client.query(query);
  });
}

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
