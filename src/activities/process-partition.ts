/**
 * processPartition: moves one partition's keyset cursor through its rows, chunk by chunk.
 *
 * Idempotency contract: each chunk is one transaction that locks the partition's ledger
 * row, reads the cursor from it, writes only rows whose values differ, and advances the
 * cursor. A retry, a restarted worker or a zombie attempt therefore continues from the
 * last committed chunk and can neither apply nor count a chunk twice. Calling it for a
 * partition that already finished returns its recorded result and writes nothing.
 *
 * Before every chunk it reads the run's control row: paused -> wait (heartbeating),
 * cancel requested -> stop at this boundary and record the partition as cancelled.
 */
import { Context, heartbeat, sleep } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import pg from 'pg';

const pgTypes = pg.types;
import { describePgError, isDataError, isPgError } from '../db/errors';
import { checkpoint, finishPartition, getPartition, lockPartition, recordChunk, setHoldReason, startAttempt, type PartitionRow } from '../ledger/partitions';
import { readGuards } from '../sql/guard-signals';
import { describeReading, governing } from '../shared/guards';
import { reserveRows, refundRows } from '../ledger/rate-limits';
import { readRunControl } from '../ledger/runs';
import { FailureType } from '../shared/failures';
import type { PartitionReport } from '../shared/types';
import { partitionConditionSignal } from '../workflows/messages';
import { ConditionReporter } from './condition-reporter';
import { describeWindow, msUntilOpen } from '../shared/window';
import type { ActivityDeps } from './deps';
import type { RunContext, RunContextCache } from './run-context';

export interface ProcessPartitionInput {
  database: string;
  runId: string;
  partitionId: string;
}

export interface ChunkHeartbeat {
  partitionId: string;
  cursor: string | null;
  chunks: number;
  rowsWritten: number;
  state: 'writing' | 'paused' | 'throttled' | 'outside-window' | 'held' | 'slowed';
}

/** Tables created in a session, remembered only after the creating transaction commits. */
const createdTables = new WeakMap<pg.PoolClient, Set<string>>();

export function processPartitionActivity(deps: ActivityDeps, contexts: RunContextCache) {
  return async function processPartition(input: ProcessPartitionInput): Promise<PartitionReport> {
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, input.runId);
    const log = deps.logger.child({ runId: input.runId, partitionId: input.partitionId });
    const activity = Context.current();
    const metrics = chunkMetrics(activity, ctx);

    let row = await startAttempt(pool, input.runId, input.partitionId);
    let beat: ChunkHeartbeat = {
      partitionId: input.partitionId,
      cursor: row.cursor,
      chunks: row.chunks,
      rowsWritten: Number(row.rows_written),
      state: 'writing',
    };
    const reporter = new ConditionReporter(
      input.partitionId,
      (condition) => activity.client.workflow.getHandle(ctx.run.workflow_id).signal(partitionConditionSignal, condition),
      log,
      // a reason left in the ledger means an earlier attempt may have told the run we were held
      { stale: row.hold_reason !== null },
    );
    // a ticker, so a long statement still heartbeats; the SDK throttles what it sends
    const ticker = setInterval(() => {
      heartbeat(beat);
      reporter.flush();
    }, 1000);
    try {
      heartbeat(beat);
      log.info({ attempt: activity.info.attempt, cursor: row.cursor }, 'partition started');
      // per attempt: adaptive chunk size, and how long a hard guard has held this partition
      let adaptiveSize: number | undefined;
      let heldSince: number | undefined;
      let lastChunkMs = 0;
      // how hard this partition may push (see nextPace); soft guard readings lower it
      let pace = FULL_PACE;
      let holdReason: string | null | undefined;
      const showHold = async (reason: string | null) => {
        // written only on change: clearing it must not cost a round trip per chunk
        if (reason === holdReason) return;
        await setHoldReason(pool, input.runId, input.partitionId, reason);
        holdReason = reason;
      };
      /** Waits `ms` in `state`, saying why in the heartbeat, the ledger and (for guards, the window and locks) the run. */
      const hold = async (state: ChunkHeartbeat['state'], cause: string | null, reason: string | null, ms: number) => {
        beat = { ...beat, state };
        heartbeat(beat);
        await showHold(reason);
        if (state === 'held' || state === 'slowed' || state === 'outside-window') reporter.set(state, cause, reason);
        if (ms > 0) await sleep(ms);
      };
      while (row.status === 'running') {
        if (activity.cancellationSignal.aborted) throw activity.cancellationSignal.reason ?? new CancelledFailure('activity cancelled');
        const control = await readRunControl(pool, input.runId);
        if (control.cancelRequested) {
          row = await finishPartition(pool, input.runId, input.partitionId, 'cancelled');
          log.info('partition cancelled at a chunk boundary');
          break;
        }
        metrics.paused.set(control.paused ? 1 : 0);
        if (control.paused) {
          await hold('paused', null, 'run paused by an operator', deps.pausePollMs ?? 1000);
          continue;
        }
        const limits = control.limits;
        const closedFor = limits.window ? msUntilOpen(limits.window, new Date()) : 0;
        if (closedFor > 0) {
          // outside the allowed hours: hold, re-reading the control row so pause, cancel and new limits still apply
          await hold('outside-window', 'window', `outside the allowed hours ${describeWindow(limits.window!)}`, Math.min(closedFor, 30_000, deps.pausePollMs ?? 1000));
          continue;
        }

        let decision: Decision = { governedBy: adaptiveSize !== undefined ? 'targetChunkSeconds' : 'chunkSize', waitMs: 0 };
        if (limits.guards) {
          const reading = governing(await readGuards(pool, limits.guards, ctx.run.spec.target.table));
          if (reading?.level === 'hard') {
            heldSince ??= Date.now();
            const heldFor = (Date.now() - heldSince) / 1000;
            const timeout = limits.guards.holdTimeoutSeconds ?? 600;
            if (heldFor > timeout) {
              // long enough that an operator should look: the partition workflow asks the run to pause
              const reason = `held ${Math.round(heldFor)}s by ${describeReading(reading)}`;
              log.warn({ guard: reading.guard, value: reading.value }, 'guard hold timed out; asking the run to pause');
              await showHold(reason);
              return { ...reportOf(row), pauseRequest: { actor: `guard:${reading.guard}`, reason } };
            }
            await hold('held', `guard:${reading.guard}`, `held by ${describeReading(reading)}`, deps.pausePollMs ?? 1000);
            continue;
          }
          heldSince = undefined;
          // graduated (AIMD): the first soft reading makes the run's partitions write one at a time,
          // further ones halve the share of time spent writing; clear readings give it back slowly
          pace = nextPace(pace, reading?.level === 'soft');
          if (pace < FULL_PACE) {
            const by = reading?.level === 'soft' ? reading : undefined;
            const duty = Math.min(1, pace);
            const waitMs = Math.round((1 / duty - 1) * lastChunkMs);
            const how = `one writer at a time${duty < 1 ? `, writing ${Math.round(duty * 100)} % of the time` : ''}`;
            const reason = `${by ? `slowed by ${describeReading(by)}` : 'slowed after a soft guard, speeding up again'} (${how})`;
            decision = { governedBy: by ? `guard:${by.guard}` : 'guard:easing', guardValue: by?.value, waitMs, oneWriter: true };
            await hold('slowed', 'guard', reason, waitMs);
          }
        } else {
          pace = FULL_PACE;
        }

        const chunkSize = adaptiveSize ?? limits.chunkSize;
        if (limits.rowsPerSecond) {
          // one budget for the whole run, across workers: reserve this chunk's rows, wait out any debt
          const wait = await reserveRows(pool, input.runId, chunkSize, limits.rowsPerSecond);
          if (wait > 0) {
            // a health guard outranks the budget in the record: it says why the database needed air
            decision = decision.governedBy.startsWith('guard:') ? { ...decision, waitMs: decision.waitMs + wait } : { governedBy: 'rowsPerSecond', waitMs: wait };
            await hold('throttled', null, pace < FULL_PACE ? (holdReason ?? null) : null, wait);
          }
        }
        beat = { ...beat, state: 'writing' };
        if (pace === FULL_PACE) {
          await showHold(null);
          reporter.set('writing', null, null);
        }
        const started = Date.now();
        const outcome = await runChunk(pool, ctx, input, chunkSize, decision);
        if (outcome.lockTimeout) {
          // never queue behind another session's lock (everyone after us would queue too): back off and look again
          if (limits.rowsPerSecond) await refundRows(pool, input.runId, chunkSize);
          await hold('held', 'lock', `waiting for a lock: ${outcome.lockTimeout}`, deps.pausePollMs ?? 1000);
          continue;
        }
        lastChunkMs = Date.now() - started - (outcome.turnMs ?? 0);
        if (limits.rowsPerSecond) await refundRows(pool, input.runId, chunkSize - outcome.rowsRead);
        if (limits.targetChunkSeconds) adaptiveSize = nextChunkSize(chunkSize, lastChunkMs, limits);
        metrics.record(outcome, lastChunkMs);
        row = outcome.row;
        beat = { ...beat, cursor: row.cursor, chunks: row.chunks, rowsWritten: Number(row.rows_written) };
        heartbeat(beat);
      }
      log.info({ status: row.status, rowsWritten: row.rows_written, chunks: row.chunks }, 'partition finished');
      return reportOf(row);
    } finally {
      clearInterval(ticker);
      await reporter.close();
    }
  };
}

const FULL_PACE = 2;
const MIN_PACE = 1 / 8;

/**
 * A partition's pace after a guard reading. 2 is full speed; below 2 the run's partitions write
 * one at a time (on a small database server, concurrent chunks take every core and live queries
 * wait for CPU); below 1 it is also the share of time spent writing. A soft reading drops it to 1,
 * then halves it (down to 1/8: a soft signal slows, only a hard one stops); a clear reading adds
 * a tenth, so ten clear readings in a row restore full speed.
 */
export function nextPace(pace: number, soft: boolean): number {
  if (soft) return pace > 1 ? 1 : Math.max(MIN_PACE, pace / 2);
  return Math.min(FULL_PACE, Math.round((pace + 0.1) * 1000) / 1000);
}

interface ChunkOutcome {
  row: PartitionRow;
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
  /** Time spent waiting for the run's writer lock (one writer at a time) before the chunk began. */
  turnMs?: number;
  /** The chunk gave up waiting for a lock after LOCK_TIMEOUT_MS and rolled back; the message says on what. */
  lockTimeout?: string;
}

/** How long a chunk waits for any lock before it rolls back and the partition holds instead. */
const LOCK_TIMEOUT_MS = 2000;
/** How long a chunk waits for its turn when the run's partitions write one at a time. */
const WRITER_WAIT_MS = 60_000;

/** The backfill's metrics, through the SDK's meter: they come out of the worker's one Prometheus endpoint. */
function chunkMetrics(activity: Context, ctx: RunContext) {
  const meter = activity.metricMeter.withTags({ backfill: ctx.run.name, run_id: ctx.run.run_id });
  const read = meter.createCounter('backfill_rows_read', 'rows', 'source rows read by committed chunks');
  const written = meter.createCounter('backfill_rows_written', 'rows', 'target rows inserted, updated or deleted by committed chunks');
  const unchanged = meter.createCounter('backfill_rows_unchanged', 'rows', 'output rows that already equalled the target');
  const chunks = meter.createCounter('backfill_chunks', 'chunks', 'committed chunks');
  const duration = meter.createHistogram('backfill_chunk_duration', 'int', 'ms', 'time from chunk start to commit');
  const paused = meter.createGauge('backfill_partition_paused', 'int', '1', '1 while this partition waits because its run is paused');
  return {
    paused,
    record(outcome: ChunkOutcome, ms: number) {
      if (outcome.rowsRead === 0 && outcome.rowsWritten === 0) return;
      read.add(outcome.rowsRead);
      written.add(outcome.rowsWritten);
      unchanged.add(outcome.rowsUnchanged);
      chunks.add(1);
      duration.record(ms);
    },
  };
}

/** What shaped a chunk: recorded with it in backfill.chunks. */
interface Decision {
  governedBy: string;
  guardValue?: number;
  waitMs: number;
  /** Take the run's writer lock: one chunk of this run writes at a time, across all workers. */
  oneWriter?: boolean;
}

/**
 * Additive increase, multiplicative decrease towards chunks of targetChunkSeconds: a fast
 * chunk grows the next by a tenth of the configured size, a slow one halves it.
 */
export function nextChunkSize(current: number, ms: number, limits: { chunkSize: number; targetChunkSeconds?: number; minChunkSize?: number; maxChunkSize?: number }): number {
  const target = (limits.targetChunkSeconds ?? 1) * 1000;
  const min = limits.minChunkSize ?? Math.max(100, Math.floor(limits.chunkSize / 10));
  const max = limits.maxChunkSize ?? limits.chunkSize * 10;
  const next = ms > target ? Math.floor(current / 2) : ms < target * 0.8 ? current + Math.max(1, Math.floor(limits.chunkSize / 10)) : current;
  return Math.min(max, Math.max(min, next));
}

async function runChunk(pool: pg.Pool, ctx: RunContext, input: ProcessPartitionInput, chunkSize: number, decision: Decision): Promise<ChunkOutcome> {
  const { compiled, run } = ctx;
  const replace = run.spec.target.mode === 'replace';
  const client = await pool.connect();
  let cursor: string | null = null;
  let hi: string | null = null;
  let bounds: PartitionRow['bounds'] | undefined;
  let broken: Error | undefined;
  let chunkStarted = Date.now();
  let turnMs = 0;
  try {
    await client.query('BEGIN');
    if (decision.oneWriter) {
      // queue for the run's writer lock (FIFO, so partitions take turns); it goes with the transaction
      await client.query(`SET LOCAL lock_timeout = ${WRITER_WAIT_MS}`);
      await client.query("SELECT pg_advisory_xact_lock(hashtext('backfill.writer'), hashtext($1))", [input.runId]);
      // waiting for our turn is not the chunk's cost: the pace after it is measured on the work alone
      turnMs = Date.now() - chunkStarted;
      chunkStarted = Date.now();
    }
    await client.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
    const locked = await lockPartition(client, input.runId, input.partitionId);
    if (locked.status !== 'running') {
      // another attempt finished it while we waited for the lock
      await client.query('COMMIT');
      return { row: locked, rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0 };
    }
    cursor = locked.cursor;
    bounds = locked.bounds;
    // replace mode computes the whole partition at once: a rollup must see all of its rows
    const limit = replace ? 2_147_483_647 : chunkSize;
    const b = compiled.chunkBounds(bounds, replace ? null : cursor, limit);
    const { rows } = await client.query<{ n: number; hi: string | null }>(b.text, b.values);
    const rowsRead = rows[0].n;
    hi = rows[0].hi;
    if (rowsRead === 0 && !replace) {
      const row = await finishPartition(client, input.runId, input.partitionId, 'succeeded');
      await client.query('COMMIT');
      return { row, rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0 };
    }

    const created = createdTables.get(client) ?? new Set<string>();
    if (!created.has(compiled.outputTable)) await client.query(compiled.createOutputTable);
    const rowsOut = await fillOutput(client, ctx, bounds, replace ? null : cursor, hi);
    let rowsWritten = 0;
    for (const statement of compiled.write(bounds)) {
      rowsWritten += (await client.query(statement.text, statement.values)).rowCount ?? 0;
    }
    const rowsUnchanged = Math.max(0, rowsOut - rowsWritten);
    const checkpointed = await checkpoint(client, input.runId, input.partitionId, hi ?? cursor, { rowsRead, rowsWritten, rowsUnchanged });
    await recordChunk(client, input.runId, input.partitionId, {
      seq: locked.chunks + 1,
      keyFrom: replace ? null : cursor,
      keyTo: hi,
      counts: { rowsRead, rowsWritten, rowsUnchanged },
      chunkSize: limit,
      durationMs: Date.now() - chunkStarted,
      waitMs: decision.waitMs + turnMs,
      governedBy: decision.governedBy,
      guardValue: decision.guardValue,
    });
    // a short chunk is the last one: finishing in the same transaction saves an empty round
    const done = replace || rowsRead < chunkSize;
    const row = done ? await finishPartition(client, input.runId, input.partitionId, 'succeeded') : checkpointed;
    await client.query('COMMIT');
    created.add(compiled.outputTable);
    createdTables.set(client, created);
    return { row, rowsRead, rowsWritten, rowsUnchanged, turnMs };
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    if (isPgError(err) && err.code === '55P03') {
      const row = (await getPartition(client, input.runId, input.partitionId))!;
      return { row, rowsRead: 0, rowsWritten: 0, rowsUnchanged: 0, lockTimeout: describePgError(err) };
    }
    if (isDataError(err) || err instanceof TransformError) {
      const range = compiled.describeRange(bounds, cursor, hi);
      const message = `partition ${input.partitionId} failed at ${range}: ${err instanceof TransformError ? err.message : describePgError(err)}`;
      await finishPartition(pool, input.runId, input.partitionId, 'failed', { message, range });
      throw ApplicationFailure.nonRetryable(message, FailureType.DataError);
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

class TransformError extends Error {}

/**
 * Rows handed to a TypeScript transform keep their exact values: timestamps and dates stay
 * PostgreSQL text (a JS Date would drop microseconds, so every row would differ from its
 * stored value and be rewritten on every run); bigint and numeric stay strings as usual.
 */
const TEXT_OIDS = new Set([1082, 1114, 1184, 1083, 1266]);
const EXACT_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    TEXT_OIDS.has(oid) ? (value: string) => value : pgTypes.getTypeParser(oid, format ?? 'text')) as typeof pgTypes.getTypeParser,
};

async function fillOutput(
  client: pg.PoolClient,
  ctx: RunContext,
  bounds: PartitionRow['bounds'],
  cursor: string | null,
  hi: string | null,
): Promise<number> {
  const { compiled, module } = ctx;
  if (!module) {
    const fill = compiled.fillFromSql(bounds, cursor, hi);
    return (await client.query(fill.text, fill.values)).rowCount ?? 0;
  }
  const read = compiled.readChunk(bounds, cursor, hi, module.reads);
  const { rows } = await client.query({ text: read.text, values: read.values, types: EXACT_TYPES });
  let out: Record<string, unknown>[];
  try {
    out = await module.transform(rows);
  } catch (err) {
    throw new TransformError(`transform ${ctx.run.transform_name}@${ctx.run.transform_version} threw: ${(err as Error).message}`);
  }
  if (!Array.isArray(out)) throw new TransformError(`transform ${ctx.run.transform_name} returned ${typeof out}, not an array of rows`);
  if (out.length === 0) return 0;
  // one JSON document per chunk: JSON.stringify is native and cheap, and the parsing happens in
  // PostgreSQL, in parallel across partitions (typed arrays built in JS cost this one thread more)
  let json: string;
  try {
    json = JSON.stringify(out);
  } catch (err) {
    throw new TransformError(`transform ${ctx.run.transform_name} returned a value JSON cannot carry (${(err as Error).message}); return bigint and binary values as strings (bytea as '\\x…' hex)`);
  }
  const fill = compiled.fillFromJson(json);
  return (await client.query(fill.text, fill.values)).rowCount ?? 0;
}

export function reportOf(row: PartitionRow): PartitionReport {
  return {
    partitionId: row.partition_id,
    status: row.status,
    rowsRead: Number(row.rows_read),
    rowsWritten: Number(row.rows_written),
    rowsUnchanged: Number(row.rows_unchanged),
    chunks: row.chunks,
    error: row.last_error ?? undefined,
  };
}
