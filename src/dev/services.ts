/**
 * Local services for `backfill dev` and `backfill demo`: the Temporal dev server (Web UI
 * on :8233, state in .data/temporal.db) unless one already answers at TEMPORAL_ADDRESS,
 * and PostgreSQL (DATABASE_URL, or an embedded server on :54329, BACKFILL_PG_PORT, with data in .data/).
 */
import path from 'node:path';
import { temporalConfig } from '../temporal/config';
import { dataDir } from './paths';
import { startPostgres, type LocalPostgres } from './postgres';
import { ensureTemporalCli } from './temporal-cli';
import { isServerUp, startDevServer } from './temporal-server';
import { envSettings } from '../util/env-settings';

export interface LocalServices {
  temporalAddress: string;
  uiUrl: string;
  postgresUrl: string;
  embeddedPostgres: boolean;
  stop(): Promise<void>;
}

/**
 * How often a history shard may read its transfer queue, where every new workflow task, activity
 * task and child start waits until matching hears of it. Temporal's default (20) holds each of
 * them up to 50 ms — 45 ms on average measured here, on every hop of a partition's hand-over and
 * of the run's finish, whatever the load. 200 reads a second cut that to about 1 ms
 * (bench/RESULTS.md, "Where the demo's seconds go"); deploy/dynamicconfig sets the same for compose.
 */
export const TRANSFER_QUEUE_POLLS_PER_SECOND = 200;

/**
 * The dev server's flags for fast task hand-offs, which every dev server this project starts (the
 * demo's, the tests') passes: the transfer queue above, and one partition per task queue instead
 * of Temporal's four. With four, a partition's first workflow task now and then (10–25 of 365
 * one-row partitions) waited about 2 s in a partition no worker was polling at that moment,
 * holding its slot: runs of many partitions took 8.1–11.8 s where they take 5.7–6.4 s with one
 * (bench/RESULTS.md, "Where the demo's seconds go"). A backfill's queues carry hundreds of tasks
 * a second at most, far below what one partition serves. And eager workflow start, which lets the
 * worker that starts a partition take its first workflow task from the start's reply
 * (activities/start-partition.ts); deploy/dynamicconfig allows it for compose too.
 */
export const TASK_HANDOFF_SPEED = [
  '--dynamic-config-value',
  `history.transferProcessorMaxPollRPS=${TRANSFER_QUEUE_POLLS_PER_SECOND}`,
  '--dynamic-config-value',
  'matching.numTaskqueueReadPartitions=1',
  '--dynamic-config-value',
  'matching.numTaskqueueWritePartitions=1',
  '--dynamic-config-value',
  'system.enableEagerWorkflowStart=true',
];

/**
 * The dev server's SQLite file in WAL mode without a sync per commit: every workflow and
 * activity task of a partition is a commit there (bench/RESULTS.md: the demo 0.95 of its run
 * time, 0.88 of its CPU). A crash of the dev server process loses nothing in WAL mode; a crash
 * of the machine may lose its last transactions, which a development server can afford.
 * Eager activity execution hands a partition's activity to the worker that scheduled it in
 * the reply to that workflow task, skipping a trip through the task queue (many one-row
 * partitions: 0.93 of the time). Production Temporal is configured on its own: compose's takes
 * the transfer queue setting from deploy/dynamicconfig, and none of the rest.
 */
export const DEV_SERVER_SPEED = [
  '--sqlite-pragma',
  'journal_mode=wal',
  '--sqlite-pragma',
  'synchronous=off',
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
  ...TASK_HANDOFF_SPEED,
];

/**
 * Starts both side by side: a first command waits for the longer of the two, not their sum. Then
 * `whenPostgres` (the demo's data). Whatever fails, everything started is stopped before the
 * error is thrown; a start under way is waited for, and nothing new begins after a failure.
 */
export async function startLocalServices<T = undefined>(
  say: (line: string) => void,
  whenPostgres?: (postgres: LocalPostgres, alsoStop: (stop: () => Promise<unknown>) => void) => Promise<T>,
): Promise<LocalServices & { prepared: T }> {
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  let failed = false;
  const failing = <V>(started: Promise<V>) =>
    started.catch((err: unknown) => {
      failed = true;
      throw err;
    });
  const temporal = failing(startTemporal(say, stops));
  const postgres = failing(
    startLocalPostgres(say, stops).then(async (server) => {
      // once the dev server has bound its ports: the connections made here take local ports from
      // the range a free port is picked from, and one could take a port the server is about to bind
      await temporal.catch(() => undefined);
      // the dev server failed: its error is the one to report, and the data can wait
      if (failed || !whenPostgres) return { server, prepared: undefined as T };
      // what it opens (a pool) is closed before PostgreSQL stops, with the services or on a failure
      const alsoStop = (stop: () => Promise<unknown>) => stops.push(async () => void (await stop()));
      return { server, prepared: await whenPostgres(server, alsoStop) };
    }),
  );
  const [t, p] = await Promise.allSettled([temporal, postgres]);
  if (t.status === 'rejected' || p.status === 'rejected') {
    await stopAll();
    throw t.status === 'rejected' ? t.reason : (p as PromiseRejectedResult).reason;
  }
  return {
    ...t.value,
    postgresUrl: p.value.server.url,
    embeddedPostgres: p.value.server.embedded,
    prepared: p.value.prepared,
    stop: stopAll,
  };
}

async function startTemporal(say: (line: string) => void, stops: (() => Promise<void>)[]): Promise<{ temporalAddress: string; uiUrl: string }> {
  const config = temporalConfig();
  const uiPort = envSettings().TEMPORAL_UI_PORT;
  if (await isServerUp(config.address, config.namespace)) {
    say(`Temporal: using the server already at ${config.address}`);
    return { temporalAddress: config.address, uiUrl: process.env.TEMPORAL_UI_URL || `http://${config.address.split(':')[0]}:${uiPort}` };
  }
  const cliPath = await ensureTemporalCli(say);
  const [host, port] = config.address.split(':');
  if (host !== '127.0.0.1' && host !== 'localhost') {
    throw new Error(`TEMPORAL_ADDRESS=${config.address} does not answer, and a dev server can only be started on this machine; unset it or start that server`);
  }
  say(`Temporal: starting the dev server (${cliPath})…`);
  const server = await startDevServer({
    cliPath,
    port: Number(port),
    uiPort,
    dbFile: path.join(dataDir(), 'temporal.db'),
    namespace: config.namespace,
    say,
    extraArgs: DEV_SERVER_SPEED,
  }).catch(
    withTakenPortHint(
      `Another process holds the dev server's port (${port}) or its Web UI's (${uiPort}): stop it, or set TEMPORAL_ADDRESS or TEMPORAL_UI_PORT to a free port (docs/configuration.md)`,
    ),
  );
  stops.push(server.stop);
  return { temporalAddress: server.address, uiUrl: server.uiUrl! };
}

async function startLocalPostgres(say: (line: string) => void, stops: (() => Promise<void>)[]): Promise<LocalPostgres> {
  const pgPort = envSettings().BACKFILL_PG_PORT;
  // an embedded server's stop is registered for Ctrl-C from its first moment (postgres.ts)
  const postgres = await startPostgres({ dataDir: path.join(dataDir(), 'postgres'), port: pgPort, say }).catch(
    withTakenPortHint(`Another process listens on port ${pgPort}: stop it, or set BACKFILL_PG_PORT to a free port (docs/configuration.md)`),
  );
  stops.push(postgres.stop);
  say(`PostgreSQL: ${postgres.embedded ? `embedded, ${redact(postgres.url)}` : 'DATABASE_URL'}`);
  return postgres;
}

export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}

/** A start that failed on a taken port rethrown with what the operator can do about it; other failures as they were. */
function withTakenPortHint(hint: string): (err: Error) => never {
  return (err) => {
    if (!/address already in use/i.test(err.message)) throw err;
    throw new Error(`${err.message}. ${hint}`);
  };
}
