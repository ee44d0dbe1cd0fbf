/**
 * `backfill demo`: the main job on embedded defaults. Runs examples/orders-usd.yaml on the
 * demo's services with live progress, prints the Web UI link and the final status, and
 * keeps everything up until Ctrl-C (or exits with --exit).
 */
import { prepareDemo } from '../../dev/demo';
import { installShutdownHandlers, untilInterrupted } from '../../dev/shutdown';
import { startRun } from '../../operations/start-run';
import { statusReportFor } from '../../operations/status';
import { renderStatus } from '../render/status';
import { watchRun } from '../render/watch';

export async function demoCommand(options: { exit?: boolean }): Promise<number> {
  installShutdownHandlers();
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const demo = await prepareDemo(say);
  try {
    const started = await startRun({ client: demo.client, taskQueue: demo.config.taskQueue }, { specFile: demo.specFile });
    say('');
    say(`Started run ${started.name}/${started.runId}: ${started.partitions} partitions`);
    say(`Web UI: ${demo.uiUrl(started.workflowId)}`);
    say('');
    const status = await watchRun(demo.pool, started.runId);
    process.stdout.write(`\n${renderStatus(await statusReportFor(demo.pool, started.runId))}\n`);
    if (!demo.freshData) say('\n(The target already held these results from an earlier demo, so nothing needed rewriting: that is idempotency at work.)');
    say(`\nRun finished: ${status}. Web UI: ${demo.uiUrl()}`);
    say(`Try: DATABASE_URL=${demo.databaseUrl} npx backfill status ${started.runId}`);
    if (options.exit === false) {
      say('Everything stays up for inspection; press Ctrl-C to stop.');
      await untilInterrupted();
    }
    return status === 'succeeded' ? 0 : 1;
  } finally {
    await demo.stop();
  }
}
