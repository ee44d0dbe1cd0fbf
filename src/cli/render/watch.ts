/**
 * Live progress of a run in the terminal: a bar over the rows the run planned to read (the
 * rows in scope at registration; partitions for runs registered before that was recorded),
 * with partitions done, rows written, rows/s and ETA, one line per partition in flight (rows so far, cursor, and why it is
 * slowed or held), and a line for each partition that fails, as it fails. Without a TTY
 * (CI, logs) a plain line every few seconds instead, and a line whenever a partition
 * starts or stops being slowed or held. Resolves with the run's final ledger status.
 */
import cliProgress from 'cli-progress';
import type pg from 'pg';
import { followRun, type RunSnapshot } from '../../operations/follow';
import type { RunStatus } from '../../domain/statuses';
import { workerGapLine, type WorkerGap } from '../../operations/database-workers';

export interface WatchOptions {
  stream?: NodeJS.WriteStream;
  intervalMs?: number;
  /** Whether no worker serves the run's database (asked of Temporal); said when it starts and when it ends. */
  workerGap?: () => Promise<WorkerGap | undefined>;
}

/** How often watch asks Temporal whether a worker serves the run's database. */
const WORKER_GAP_EVERY_MS = 10_000;

export async function watchRun(pool: pg.Pool, runId: string, options: WatchOptions = {}): Promise<RunStatus> {
  const stream = options.stream ?? process.stderr;
  const view = stream.isTTY ? barView(stream) : lineView(stream);
  const stopGapWatch = options.workerGap ? watchWorkerGap(options.workerGap, (line) => view.note(line)) : () => undefined;
  try {
    return await followRun(pool, runId, (s) => view.show(s), {
      intervalMs: options.intervalMs,
      runningLimit: stream.isTTY ? 20 : 1000,
      // the workers ride out a database restart; so does the follower, saying so once
      onOutage: (() => {
        let away = false;
        return (message: string | null) => {
          if (message && !away) stream.write(`${message}\n`);
          if (!message && away) stream.write('database back; following again\n');
          away = message !== null;
        };
      })(),
    });
  } finally {
    stopGapWatch();
    view.stop();
  }
}

/** A line when the run's database loses its last worker, and one when a worker serves it again. */
function watchWorkerGap(probe: () => Promise<WorkerGap | undefined>, say: (line: string) => void): () => void {
  let waiting = false;
  let asking = false;
  const ask = () => {
    if (asking) return;
    asking = true;
    probe()
      .then((gap) => {
        if (gap && !waiting) say(workerGapLine(gap));
        if (!gap && waiting) say("a worker serves the run's database again; it carries on");
        waiting = gap !== undefined;
      })
      .catch(() => undefined) // Temporal out of reach: the ledger's view goes on
      .finally(() => void (asking = false));
  };
  ask();
  const timer = setInterval(ask, WORKER_GAP_EVERY_MS);
  return () => clearInterval(timer);
}

function stateOf(s: RunSnapshot): string {
  if (s.canaryHold) return `held: ${s.canaryHold}`;
  return s.run.paused ? 'paused by an operator' : s.run.cancel_requested ? 'cancelling' : s.run.status;
}

/** Failed partitions are news once each. */
function failureLines(): (s: RunSnapshot) => string[] {
  const reported = new Set<string>();
  return (s) =>
    s.failed
      .filter((p) => !reported.has(p.partition_id) && reported.add(p.partition_id))
      .map((p) => `partition ${p.partition_id} FAILED: ${p.last_error ?? 'no message'}\n`);
}

/**
 * What the run bar measures: rows read against the rows planned, which moves with every chunk
 * (partitions finish in steps, and a few big ones can sit at 0 % for most of a run).
 */
export function progressOf(s: RunSnapshot): { value: number; total: number; unit: 'rows' | 'partitions' } {
  if (s.run.rows_planned === null || s.run.rows_planned === undefined)
    return { value: s.done, total: Math.max(s.run.partitions_total, s.totals.total), unit: 'partitions' };
  const planned = Number(s.run.rows_planned);
  // an estimate can be short, and rows arrive while a run goes on: never past 100 %, never stuck below it at the end
  const total = !s.active ? Math.max(s.totals.rowsRead, 1) : Math.max(planned, s.totals.rowsRead, 1);
  return { value: s.totals.rowsRead, total, unit: 'rows' };
}

function barView(stream: NodeJS.WriteStream) {
  const bars = new cliProgress.MultiBar(
    {
      stream,
      hideCursor: true,
      etaBuffer: 30,
      clearOnComplete: false,
      format:
        '{bar} {percentage}% | {value}/{total} {unit} | {done}/{partitions} partitions | {written} written | {rate} rows/s | ETA {eta_formatted} | {state}',
    },
    cliProgress.Presets.shades_classic,
  );
  const newFailures = failureLines();
  let runBar: cliProgress.SingleBar | undefined;
  const partitionBars = new Map<string, cliProgress.SingleBar>();
  return {
    show(s: RunSnapshot) {
      const progress = progressOf(s);
      const payload = {
        unit: progress.unit,
        done: s.done,
        // the plan's, and any cut from them while running (limits.splitTail)
        partitions: Math.max(s.run.partitions_total, s.totals.total),
        written: s.totals.rowsWritten,
        rate: s.rowsPerSecond,
        state: stateOf(s),
      };
      runBar ??= bars.create(progress.total, 0, payload);
      for (const line of newFailures(s)) bars.log(line);
      runBar.setTotal(progress.total);
      runBar.update(progress.value, payload);
      const seen = new Set(s.running.map((p) => p.partition_id));
      for (const [id, bar] of partitionBars) {
        if (seen.has(id)) continue;
        bars.remove(bar);
        partitionBars.delete(id);
      }
      for (const p of s.running) {
        const payload = { id: p.partition_id, rows: p.rows_read, chunks: p.chunks, cursor: p.cursor ?? '—', why: p.hold_reason ? ` — ${p.hold_reason}` : '' };
        const bar = partitionBars.get(p.partition_id);
        if (bar) bar.update(0, payload);
        else partitionBars.set(p.partition_id, bars.create(1, 0, payload, { format: '  ↳ {id}: {rows} rows in {chunks} chunks, cursor {cursor}{why}' }));
      }
      if (!s.active) for (const bar of partitionBars.values()) bars.remove(bar);
    },
    note: (line: string) => bars.log(`${line}\n`),
    stop: () => bars.stop(),
  };
}

function lineView(stream: NodeJS.WriteStream) {
  const started = Date.now();
  const newFailures = failureLines();
  let lastPrint = 0;
  // what each running partition was last said to be waiting for, by kind (a guard's value moving is not news)
  const shownReasons = new Map<string, string>();
  return {
    show(s: RunSnapshot) {
      for (const line of newFailures(s)) stream.write(line);
      for (const p of s.running) {
        const kind = p.hold_reason?.replace(/[\d.,]+/g, '#') ?? '';
        if ((shownReasons.get(p.partition_id) ?? '') === kind) continue;
        stream.write(`partition ${p.partition_id}: ${p.hold_reason ?? 'writing again'}\n`);
        shownReasons.set(p.partition_id, kind);
      }
      const now = Date.now();
      if (now - lastPrint < 5000 && s.active) return;
      lastPrint = now;
      const t = s.totals;
      const progress = progressOf(s);
      const share = progress.unit === 'rows' ? ` of ${progress.total} planned (${Math.floor((100 * progress.value) / progress.total)} %)` : '';
      stream.write(
        `[${Math.round((now - started) / 1000)}s] ${stateOf(s)}: ${s.done}/${t.total} partitions, ${t.rowsRead} rows read${share}, ${t.rowsWritten} written, ${s.rowsPerSecond} rows/s${t.byStatus.failed ? `, ${t.byStatus.failed} failed` : ''}\n`,
      );
    },
    note: (line: string) => void stream.write(`${line}\n`),
    stop: () => undefined,
  };
}
