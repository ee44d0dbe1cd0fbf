/**
 * Workers made side by side, kept all or none. `Worker.create` loads the workflow bundle into a
 * thread of its own for each worker, a few hundred milliseconds apiece, so a worker serving the
 * common queue and its databases' queues starts them together instead of one after another. A
 * Worker made but never run holds its thread and a reference on the connection (which then
 * refuses to close), so when one creation fails the others are run down before the failure is
 * thrown: the first in the order given, so the error reported does not depend on which
 * creation lost the race.
 */
import type { Worker } from '@temporalio/worker';

export async function workersAllOrNone(creating: Promise<Worker[]>[]): Promise<Worker[][]> {
  const settled = await Promise.allSettled(creating);
  const made = settled.map((s) => (s.status === 'fulfilled' ? s.value : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return made;
  await Promise.all(made.flat().map(runDown));
  throw failed.reason;
}

/** A Worker made and not run: run it and stop it at once, the SDK's way of releasing its thread and its hold on the connection. */
async function runDown(worker: Worker): Promise<void> {
  await worker.runUntil(Promise.resolve()).catch(() => undefined);
}
