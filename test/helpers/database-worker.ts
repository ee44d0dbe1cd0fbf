/**
 * `backfill worker` in a process of its own next to one database, as deployed beside it: it holds
 * only that database's variable (none of the test's others, no DATABASE_URL) and serves the
 * common base queue, named `worker-<variable>` in the chunk log. The routing and fleet tests run
 * one per cluster.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { temporalAddress } from './temporal';

/** `address`: a Temporal server of the test's own (the suite's dev server by default). */
export function spawnDatabaseWorker(variable: string, baseQueue: string, onOutput?: (text: string) => void, address = temporalAddress()): ChildProcess {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(BF_|DATABASE_URL$|JEST_)/.test(key)) env[key] = value;
  const child = spawn(process.execPath, [path.resolve(__dirname, '../../dist/client.js'), 'worker'], {
    env: {
      ...env,
      [variable]: process.env[variable],
      BACKFILL_DATABASES: variable,
      TEMPORAL_ADDRESS: address,
      BACKFILL_TASK_QUEUE: baseQueue,
      BACKFILL_WORKER_IDENTITY: `worker-${variable}`,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', onOutput ? 'pipe' : 'ignore', onOutput ? 'pipe' : 'inherit'],
  });
  if (onOutput) {
    child.stdout!.on('data', (d: Buffer) => onOutput(d.toString()));
    child.stderr!.on('data', (d: Buffer) => onOutput(d.toString()));
  }
  return child;
}
