/**
 * `backfill demo`: the main job on embedded defaults. Brings up Temporal and PostgreSQL,
 * a worker, the demo dataset, runs examples/orders-usd.yaml with live progress, prints
 * the Web UI link and the final summary, and keeps everything up until Ctrl-C.
 */
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporalConfig, webUiUrl } from '../config';
import { createPool } from '../db/pool';
import { ensureDemoData } from '../dev/demo-data';
import { projectRoot } from '../dev/paths';
import { ensureDatabase } from '../dev/postgres';
import { startLocalServices } from '../dev/services';
import { getRun } from '../ledger/runs';
import { createLogger } from '../logger';
import { createBackfillWorker, installRuntimeLogger } from '../worker';
import { startRun } from './start-run';
import { renderStatus, statusReport } from './status';
import { watchRun } from './watch';

export async function demo(options: { exit?: boolean }): Promise<number> {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const services = await startLocalServices(say);
  const config = { ...temporalConfig(), address: services.temporalAddress };
  process.env.DEMO_DATABASE_URL = await ensureDatabase(services.postgresUrl, 'backfill_demo');
  const pool = createPool(process.env.DEMO_DATABASE_URL, { max: 4, applicationName: 'backfill-demo' });
  const data = await ensureDemoData(pool, say);
  say(`Demo data: ${data.rows.toLocaleString('en-US')} orders in demo.orders${data.created ? '' : ' (already there)'}`);

  process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
  installRuntimeLogger(process.env.LOG_LEVEL);
  const { worker, close } = await createBackfillWorker({ temporal: config, logger: createLogger('backfill-worker') });
  const workerRun = worker.run();
  const connection = await Connection.connect({ address: config.address });
  const client = new Client({ connection, namespace: config.namespace });

  const started = await startRun({ specFile: path.join(projectRoot(), 'examples', 'orders-usd.yaml'), client, taskQueue: config.taskQueue });
  say('');
  say(`Started run ${started.name}/${started.runId}: ${started.partitions} partitions`);
  say(`Web UI: ${webUiUrl(config.address, config.namespace, started.workflowId, { ...process.env, TEMPORAL_UI_URL: services.uiUrl })}`);
  say('');
  const status = await watchRun(pool, started.runId);
  const run = await getRun(pool, started.runId);
  process.stdout.write(`\n${renderStatus(await statusReport(pool, run!))}\n`);
  if (data.created === false) say('\n(The target already held these results from an earlier demo, so nothing needed rewriting: that is idempotency at work.)');
  say(`\nRun finished: ${status}. Web UI: ${services.uiUrl}`);
  say(`Try: DATABASE_URL=${process.env.DEMO_DATABASE_URL} npx backfill status ${started.runId}`);

  if (options.exit === false) {
    say('Everything stays up for inspection; press Ctrl-C to stop.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await workerRun;
  await close();
  await connection.close();
  await pool.end();
  await services.stop();
  return status === 'succeeded' ? 0 : 1;
}
