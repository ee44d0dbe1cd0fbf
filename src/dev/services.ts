/**
 * Local services for `backfill dev` and `backfill demo`: the Temporal dev server (Web UI
 * on :8233, state in .data/temporal.db) unless one already answers at TEMPORAL_ADDRESS,
 * and PostgreSQL (DATABASE_URL, or an embedded server on :54329, BACKFILL_PG_PORT, with data in .data/).
 */
import path from 'node:path';
import { temporalConfig } from '../temporal/config';
import { dataDir } from './paths';
import { startPostgres } from './postgres';
import { stopOnExit } from './shutdown';
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

export async function startLocalServices(say: (line: string) => void): Promise<LocalServices> {
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    return await startServices(say, stops, stopAll);
  } catch (err) {
    // a dev server started before PostgreSQL failed must not outlive this command
    await stopAll();
    throw err;
  }
}

async function startServices(say: (line: string) => void, stops: (() => Promise<void>)[], stopAll: () => Promise<void>): Promise<LocalServices> {
  const config = temporalConfig();
  let temporalAddress = config.address;
  const uiPort = envSettings().TEMPORAL_UI_PORT;
  let uiUrl = process.env.TEMPORAL_UI_URL || `http://${config.address.split(':')[0]}:${uiPort}`;
  if (await isServerUp(config.address, config.namespace)) {
    say(`Temporal: using the server already at ${config.address}`);
  } else {
    const cliPath = await ensureTemporalCli(say);
    const [host, port] = config.address.split(':');
    if (host !== '127.0.0.1' && host !== 'localhost') {
      throw new Error(
        `TEMPORAL_ADDRESS=${config.address} does not answer, and a dev server can only be started on this machine; unset it or start that server`,
      );
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
    temporalAddress = server.address;
    uiUrl = server.uiUrl!;
    stops.push(server.stop);
  }
  const pgPort = envSettings().BACKFILL_PG_PORT;
  const postgres = await startPostgres({ dataDir: path.join(dataDir(), 'postgres'), port: pgPort, say }).catch(
    withTakenPortHint(`Another process listens on port ${pgPort}: stop it, or set BACKFILL_PG_PORT to a free port (docs/configuration.md)`),
  );
  const unregisterPostgres = stopOnExit(postgres.stop);
  stops.push(postgres.stop, async () => unregisterPostgres());
  say(`PostgreSQL: ${postgres.embedded ? `embedded, ${redact(postgres.url)}` : 'DATABASE_URL'}`);
  return {
    temporalAddress,
    uiUrl,
    postgresUrl: postgres.url,
    embeddedPostgres: postgres.embedded,
    stop: stopAll,
  };
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
