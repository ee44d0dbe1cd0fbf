/**
 * The forward chunk, inside the transaction chunk-transaction.ts opened: find the chunk's key
 * range from the cursor, compute the transform's output into the session's output table, take
 * the before-images, write only rows whose values differ, check the target now holds what was
 * computed, and advance the cursor and the chunk log — all committed together, or none of it.
 */
import type pg from 'pg';
import { finishPartition, checkpointChunk, type PartitionRow } from '../ledger/partitions';
import { boundsText } from '../compiler/partition-predicate';
import type { OutputKeyRange } from '../compiler/target-join';
import { likelyLastChunk } from '../domain/partition-average';
import type { PartitionBounds } from '../domain/types';
import type { OutputTable } from '../transforms/module-fill';
import { TransformError } from '../transforms/transform-error';
import { captureBeforeImages, imagesDiffer } from '../undo/take-images';
import type { ChunkBody, ChunkRequest, ChunkWork } from './chunk-transaction';
import { fillOutput } from './fill-output';
import type { RunContext } from './run-context';

/** Output tables created in a session, remembered only after the creating transaction commits. */
const createdTables = new WeakMap<pg.PoolClient, Map<string, OutputTable>>();

/** Replace mode computes a partition whole, in one chunk: a rollup must see all of its rows. */
const WHOLE_PARTITION = 2_147_483_647;

export function forwardChunk(ctx: RunContext, request: ChunkRequest): ChunkBody {
  const { compiled } = ctx;
  const { runId, partitionId } = request;
  const replace = ctx.spec.target.mode === 'replace';
  return async (client, locked, at): Promise<ChunkWork> => {
    const { bounds } = locked;
    const limit = replace ? WHOLE_PARTITION : request.chunkSize;
    const b = compiled.chunkBounds(bounds, replace ? null : at.cursor, limit, replace || likelyLast(ctx, locked, limit));
    const { rows } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
    const rowsRead = rows[0].n;
    at.hi = rows[0].hi;
    if (rowsRead === 0 && !replace) {
      const row = await finishPartition(client, runId, partitionId, 'succeeded');
      return { row, counts: { rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0 }, done: true };
    }

    const created = createdTables.get(client) ?? new Map<string, OutputTable>();
    let table = created.get(compiled.outputTable);
    if (!table) {
      await client.query(compiled.createOutputTable);
      table = {};
    }
    const { rows: rowsOut, range } = await fillOutput(client, ctx, table, bounds, replace ? null : at.cursor, at.hi);
    if (replace) await refuseRowsOutsidePartition(client, ctx, partitionId, bounds);
    const imaged = await captureBeforeImages(client, ctx, bounds, range, rowsOut);
    let rowsWritten = 0;
    for (const statement of compiled.write(bounds, range)) {
      rowsWritten += (await client.query(statement.text, statement.values)).rowCount ?? 0;
    }
    if (imaged !== null && imaged !== rowsWritten) throw imagesDiffer(ctx, imaged, rowsWritten);
    const rowsSkipped = await reconcile(client, ctx, partitionId, range);
    const counts = { rowsRead, rowsWritten, rowsUnchanged: Math.max(0, rowsOut - rowsWritten - rowsSkipped), rowsSkipped };
    // a short chunk is the last one: finishing in the same transaction saves an empty round
    const done = replace || rowsRead < request.chunkSize;
    const row = await checkpointChunk(
      client,
      runId,
      partitionId,
      at.hi ?? at.cursor,
      {
        seq: locked.chunks + 1,
        keyFrom: replace ? null : at.cursor,
        keyTo: at.hi,
        counts,
        chunkSize: limit,
        durationMs: Date.now() - at.startedAt,
        waitMs: request.record.waitMs + at.turnMs,
        governedBy: request.record.governedBy,
        guardValue: request.record.guardValue,
        worker: request.worker,
      },
      done,
    );
    const remember = () => {
      created.set(compiled.outputTable, table);
      createdTables.set(client, created);
    };
    return { row, counts, done, afterCommit: remember };
  };
}

/**
 * Whether this chunk is expected to end its partition: what an average partition of the plan
 * holds, less what this one has read, is under a chunk. It shapes the statement that finds the
 * chunk's end (CompiledRun.chunkBounds), never what it answers.
 */
function likelyLast(ctx: RunContext, partition: PartitionRow, limit: number): boolean {
  const { rows_planned: planned, partitions_total: partitions } = ctx.run;
  return likelyLastChunk(planned == null ? null : Number(planned), partitions, Number(partition.rows_read), limit);
}

/**
 * Replace mode deletes and rewrites exactly its partition's target rows. An output row that
 * belongs to another partition (6-hour partitions feeding a daily rollup, a day computed in
 * another time zone) would overwrite what that partition computed: the chunk writes nothing
 * and the partition fails, saying how to partition instead.
 */
async function refuseRowsOutsidePartition(client: pg.PoolClient, ctx: RunContext, partitionId: string, bounds: PartitionRow['bounds']): Promise<void> {
  const check = ctx.compiled.outsidePartition(bounds);
  const { rows } = await client.query<{ key: string; value: string | null; total: string }>(check.text, check.values);
  if (rows.length === 0) return;
  const pcol = ctx.spec.target.partitionColumn!;
  const what =
    `the transform produced ${rows[0].total} row(s) whose ${pcol} lies outside partition ${partitionId}; ` +
    'replace mode may only write rows of the partition that computed them: partition at the grain of the target (for a daily rollup, time partitions of "1 day", with partition.timeZone set to the zone the days are computed in; UTC by default)';
  // values and keys are row data: the ledger's detail only
  const examples = rows.map((r) => `${pcol} = ${r.value ?? 'NULL'} (key ${r.key})`).join(', ');
  throw new TransformError(`${what}; the partition holds ${boundsText({ ...bounds, column: pcol } as PartitionBounds)}; for example ${examples}`, what);
}

/**
 * Reconciliation, on every chunk, before it commits: the target must now hold the output rows
 * as the transform computed them (all of them when the target has triggers or rules, else a
 * fixed 1-in-16 sample of keys: see CompiledRun.reconcile). Update mode may skip output rows
 * whose key the target lacks (it only updates); they are counted exactly, never silently
 * dropped. Any other difference fails the partition, with the first keys in the ledger.
 */
async function reconcile(client: pg.PoolClient, ctx: RunContext, partitionId: string, range: OutputKeyRange | null): Promise<number> {
  const check = ctx.compiled.reconcile(range);
  const { rows } = await client.query<{ missing: string; differing: string; examples: string[] | null }>(check.text, check.values);
  const mode = ctx.spec.target.mode;
  const missing = Number(rows[0].missing);
  const differing = Number(rows[0].differing);
  if (differing === 0 && (missing === 0 || mode === 'update')) {
    if (mode !== 'update') return 0;
    if (ctx.run.shape.targetRewrites) return missing; // every row was compared: exact already
    // the sample saw some; the skipped count must be exact
    const absent = ctx.compiled.countAbsent();
    return Number((await client.query<{ n: string }>(absent.text, absent.values)).rows[0].n);
  }
  const target = ctx.spec.target.table;
  const what =
    `reconciliation failed: after the write, ${target} does not hold what the transform computed for ` +
    [differing ? `${differing} row(s) (other values)` : '', missing && mode !== 'update' ? `${missing} row(s) (absent)` : ''].filter(Boolean).join(' and ') +
    `; a trigger or rule on ${target} may be rewriting them. Nothing of this chunk was committed`;
  throw new TransformError(`${what}; keys: ${(rows[0].examples ?? []).join(', ')}`, `${what} (partition ${partitionId}; keys in the ledger)`);
}
