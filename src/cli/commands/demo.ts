/**
 * `backfill demo`: the main job on embedded defaults. Runs examples/orders-usd.yaml on the
 * demo's services with live progress, prints the Web UI link and the final status, and
 * keeps everything up until Ctrl-C (or exits with --exit).
 */
import { Command } from 'commander';
import { interruptedDemoRun, prepareDemo } from '../../dev/demo';
import { loadSpecFile } from '../../specs/load';
import { installShutdownHandlers, untilInterrupted } from '../../dev/shutdown';
import { startRun } from '../../operations/start-run';
import { statusReportFor } from '../../operations/status';
import { renderStatus } from '../render/status';
import { watchRun } from '../render/watch';

async function demo(options: { exit?: boolean }): Promise<number> {
  installShutdownHandlers();
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const demo = await prepareDemo(say);
  try {
    const interrupted = await interruptedDemoRun(demo.pool, demo.client, loadSpecFile(demo.specFile).spec.name);
    let started: { runId: string; name: string; workflowId: string };
    say('');
    if (interrupted) {
      started = interrupted;
      say(`Run ${started.name}/${started.runId} of an earlier demo was interrupted; it carries on from its checkpoints`);
    } else {
      const fresh = await startRun({ client: demo.client, taskQueue: demo.config.taskQueue }, { specFile: demo.specFile });
      started = fresh;
      say(`Started run ${fresh.name}/${fresh.runId}: ${fresh.partitions} partitions`);
    }
    say(`Web UI: ${demo.uiUrl(started.workflowId)}`);
    say('');
    const status = await watchRun(demo.pool, started.runId);
    const report = await statusReportFor(demo.pool, started.runId);
    process.stdout.write(`\n${renderStatus(report)}\n`);
    // said only when it is true: a target emptied since the last demo is written again
    if (report.totals.rowsWritten === 0 && report.totals.rowsUnchanged > 0) {
      say('\n(The target already held these results from an earlier demo, so nothing needed rewriting: that is idempotency at work.)');
    }
    say(`\nRun finished: ${status}. Web UI: ${demo.uiUrl()}`);
    say(`Try: DATABASE_URL=${demo.databaseUrl} bin/backfill status ${started.runId}`);
    if (options.exit === false) {
      say('Everything stays up for inspection; press Ctrl-C to stop.');
      await untilInterrupted();
    }
    return status === 'succeeded' ? 0 : 1;
  } finally {
    await demo.stop();
  }
}

export function command(): Command {
  return new Command('demo')
    .description('the demo: services, a worker, 1.2M demo orders and a backfill with live progress; stays up until Ctrl-C')
    .option('--exit', 'exit when the run finishes instead of staying up')
    .action(async (opts: { exit?: boolean }) => {
      process.exitCode = await demo({ exit: opts.exit ? true : false });
    });
}
