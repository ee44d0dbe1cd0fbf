/**
 * Where a finished run's wall time went, from its ledger alone: registration, the wait for the
 * first chunk, chunk work, the gaps between a partition's chunks, the hand-over between
 * partitions, and the tail after the last chunk (the whole-run check, the report). It is the
 * profile behind the ratio of (b) to the bare chunk loop in bench/RESULTS.md.
 * A partition's finish is written in its last chunk's transaction, so its slot's hand-over to
 * the next partition shows only as that partition's wait for its first chunk.
 * Run: DATABASE_URL=… npx tsx bench/run-timeline.ts <run name or run id> [more …]
 * (a name picks its latest run: in npm run bench, (c) re-runs (b) under the same name)
 */
import pg from 'pg';

interface Chunk {
  partition_id: string;
  seq: number;
  started: number;
  ms: number;
  rows: number;
}

async function timeline(pool: pg.Pool, which: string): Promise<string> {
  const run = (
    await pool.query<{ run_id: string; created: number; started: number | null; finished: number | null; status: string }>(
      `SELECT run_id, status, extract(epoch FROM created_at) * 1000 AS created, extract(epoch FROM started_at) * 1000 AS started,
              extract(epoch FROM finished_at) * 1000 AS finished
         FROM backfill.runs WHERE run_id = $1 OR name = $1 ORDER BY created_at DESC LIMIT 1`,
      [which],
    )
  ).rows[0];
  if (!run) throw new Error(`no run named or with the id ${which} in backfill.runs`);
  const partitions = (
    await pool.query<{ partition_id: string; started: number }>(
      `SELECT partition_id, extract(epoch FROM started_at) * 1000 AS started
         FROM backfill.partitions WHERE run_id = $1 AND started_at IS NOT NULL ORDER BY started_at`,
      [run.run_id],
    )
  ).rows.map((p) => ({ ...p, started: Number(p.started) }));
  // committed_at defaults to now(): the chunk transaction's start, so a chunk spans [committed_at, + duration_ms]
  const chunks: Chunk[] = (
    await pool.query<Chunk>(
      `SELECT partition_id, seq, extract(epoch FROM committed_at) * 1000 AS started, duration_ms AS ms, rows_read AS rows
         FROM backfill.chunks WHERE run_id = $1 ORDER BY partition_id, seq`,
      [run.run_id],
    )
  ).rows.map((c) => ({ ...c, started: Number(c.started), ms: Number(c.ms), rows: Number(c.rows) }));
  if (chunks.length === 0 || run.finished === null) throw new Error(`run ${run.run_id} has no chunks or has not finished (${run.status})`);

  const created = Number(run.created);
  const finished = Number(run.finished);
  const firstChunk = Math.min(...chunks.map((c) => c.started));
  const lastChunkEnd = Math.max(...chunks.map((c) => c.started + c.ms));
  const chunkMs = chunks.reduce((s, c) => s + c.ms, 0);
  let beforeFirstChunk = 0;
  let betweenChunks = 0;
  for (const p of partitions) {
    const own = chunks.filter((c) => c.partition_id === p.partition_id);
    if (own.length === 0) continue;
    beforeFirstChunk += own[0].started - p.started;
    for (let i = 1; i < own.length; i++) betweenChunks += own[i].started - (own[i - 1].started + own[i - 1].ms);
  }
  const rows = chunks.reduce((s, c) => s + c.rows, 0);
  const wall = finished - created;
  const ms = (v: number) => `${Math.round(v).toLocaleString('en-US')} ms`;
  return [
    `run ${run.run_id} (${run.status}): ${rows.toLocaleString('en-US')} rows, ${partitions.length} partitions, ${chunks.length} chunks, ${ms(wall)} from registration to finish`,
    `  registration → first chunk starts        ${ms(firstChunk - created)}`,
    `  first chunk starts → last chunk ends      ${ms(lastChunkEnd - firstChunk)}`,
    `  last chunk ends → run finished            ${ms(finished - lastChunkEnd)}   (whole-run check, report)`,
    `  summed over partitions (slot time):`,
    `    chunk transactions                      ${ms(chunkMs)}   (${Math.round(chunkMs / chunks.length)} ms per chunk)`,
    `    partition start → its first chunk       ${ms(beforeFirstChunk)}   (${Math.round(beforeFirstChunk / partitions.length)} ms per partition)`,
    `    between a partition's chunks            ${ms(betweenChunks)}   (${Math.round(betweenChunks / Math.max(1, chunks.length - partitions.length))} ms per gap)`,
  ].join('\n');
}

async function main(): Promise<void> {
  const runs = process.argv.slice(2);
  if (!process.env.DATABASE_URL || runs.length === 0) {
    process.stderr.write('usage: DATABASE_URL=postgres://… npx tsx bench/run-timeline.ts <run name or run id> [more …]\n');
    process.exit(2);
  }
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  try {
    for (const run of runs) process.stdout.write(`${await timeline(pool, run)}\n`);
  } finally {
    await pool.end();
  }
}

main().catch((err) => {
  process.stderr.write(`run-timeline: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
