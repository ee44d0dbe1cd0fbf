/** `backfill worker`: the worker operators deploy, as `node dist/worker.js` starts it. */
import { Command } from 'commander';

export function command(): Command {
  return new Command('worker')
    .description('run a worker (TEMPORAL_ADDRESS, BACKFILL_TASK_QUEUE, and the database variables your specs name)')
    .action(async () => {
      // loaded on demand: the other commands need no worker runtime
      const { runWorker } = await import('../../worker');
      await runWorker();
    });
}
