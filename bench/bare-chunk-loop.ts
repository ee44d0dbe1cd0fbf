/**
 * The bare chunk loop: this project's compiled chunk statements (bounds, transform into the
 * session's output table, the guarded write, the sampled reconciliation, commit), partition
 * after partition in as many parallel sessions as `sessions` holds, with no Temporal, no worker
 * and no ledger. What is left between it and the backfill end to end is orchestration and checkpoints.
 * With `images` (a table name) it takes each chunk's before-images as the worker does, into that
 * table, created here: the run keeps them by default, and (b) / (e) measures orchestration alone.
 *
 * Its sessions come from `sessions`, a pool the benchmark keeps for the whole invocation, as a
 * worker keeps its pool's sessions between runs: a new PostgreSQL backend pays for mapping the
 * shared buffers it touches, page by page (tens of microseconds a fault on a VM), and a loop that
 * connected afresh every round paid that where the runs it is measured against did not
 * (bench/RESULTS.md, "Where a new session's time goes").
 */
import pg from 'pg';
import { compileRun } from '../src/compiler/statements';
import { compileBeforeImages } from '../src/undo/image-statements';
import type { RunShape } from '../src/compiler/shape';
import type { Spec } from '../src/specs/schema';
import { resolveSpec } from '../src/specs/resolve';
import type { PartitionBounds } from '../src/domain/types';
import { likelyLastChunk } from '../src/domain/partition-average';
import { fillAnswer, type FillAnswer } from '../src/db/output-key-range';

/** The loop's sessions for a whole invocation: `streams` of them, never closed while idle; end() it when done. */
export const openBareSessions = (url: string, streams = 2): pg.Pool => new pg.Pool({ connectionString: url, max: streams, idleTimeoutMillis: 0 });

/**
 * `rowsPlanned`: the rows of all `partitions`, as a run registers them; the loop then expects a
 * partition's last chunk where a worker does (forward-chunk.ts, likelyLast) and finds its end
 * with the same statement.
 */
export async function bareChunkLoop(
  sessions: pg.Pool,
  written: Spec,
  shape: RunShape,
  partitions: PartitionBounds[],
  images?: string,
  rowsPlanned?: number,
): Promise<number> {
  // resolved as a worker resolves the spec its run's ledger row holds
  const spec = resolveSpec(written);
  const compiled = compileRun(spec, shape);
  const imaging = images ? compileBeforeImages(spec, shape) : undefined;
  if (images && imaging) {
    await sessions.query(`DROP TABLE IF EXISTS ${images}, ${images}_row`);
    for (const statement of imaging.createTables({ table: images, rowType: `${images}_row` })) await sessions.query(statement);
  }
  const queue = [...partitions];
  const stream = async (): Promise<number> => {
    const client = await sessions.connect();
    let rows = 0;
    let failed: unknown;
    try {
      await client.query(compiled.createOutputTable);
      for (let bounds = queue.shift(); bounds; bounds = queue.shift()) {
        let cursor: string | null = null;
        let read = 0;
        for (;;) {
          // the chunk's transaction as the worker opens it: one snapshot for read and write
          await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
          const likelyLast = likelyLastChunk(rowsPlanned, partitions.length, read, spec.limits.chunkSize);
          const b = compiled.chunkBounds(bounds, cursor, spec.limits.chunkSize, likelyLast);
          const { n, hi } = (await client.query<{ n: number; hi: string | null }>(b.text, b.values)).rows[0];
          if (n === 0) {
            await client.query('COMMIT');
            break;
          }
          const fill = compiled.fillChunkFromSql(bounds, cursor, hi);
          const { rows: outputRows, range } = fillAnswer(compiled, (await client.query<FillAnswer>(fill.text, fill.values)).rows[0]);
          if (images && imaging)
            for (const c of imaging.capture({ table: images, rowType: `${images}_row` }, bounds, range, outputRows)) await client.query(c.text, c.values);
          for (const w of compiled.write(bounds, range)) await client.query(w.text, w.values);
          const check = compiled.reconcile(range);
          await client.query(check.text, check.values);
          await client.query('COMMIT');
          rows += n;
          read += n;
          cursor = hi;
          if (n < spec.limits.chunkSize) break;
        }
      }
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      // a session left inside a failed transaction is closed, not kept for the next round
      client.release(failed !== undefined);
    }
    return rows;
  };
  // one stream per session: more would wait on the pool and measure fewer sessions than they name
  const counts = await Promise.all(Array.from({ length: sessions.options.max ?? 1 }, () => stream()));
  return counts.reduce((a, b) => a + b, 0);
}
