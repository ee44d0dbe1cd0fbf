/**
 * A worker makes its queues' Workers side by side (src/temporal/workers-all-or-none.ts): all of
 * them, or none. Real Workers on the test server: when one creation fails, the Workers the others
 * made are run down (a Worker made and never run keeps its thread, and its hold on the connection
 * makes the connection refuse to close), and the failure reported is the first in the order
 * given, whichever failed first.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { workersAllOrNone } from '../src/temporal/workers-all-or-none';
import { temporalAddress, uniqueQueue, workflowBundle } from './helpers/temporal';

const made = async (connection: NativeConnection, taskQueue: string): Promise<Worker[]> => [
  await Worker.create({ connection, namespace: 'default', taskQueue, workflowBundle: await workflowBundle(), activities: {} }),
];
const failingAfter = (ms: number, message: string): Promise<Worker[]> => new Promise((_, reject) => setTimeout(() => reject(new Error(message)), ms));

test('all made: every Worker is returned in the order asked, and each runs', async () => {
  const connection = await NativeConnection.connect({ address: temporalAddress() });
  try {
    const queues = [uniqueQueue('start-a'), uniqueQueue('start-b')];
    const [[a], [b]] = await workersAllOrNone(queues.map((q) => made(connection, q)));
    expect([a.options.taskQueue, b.options.taskQueue]).toEqual(queues);
    await Promise.all([a.runUntil(Promise.resolve()), b.runUntil(Promise.resolve())]);
    expect([a.getState(), b.getState()]).toEqual(['STOPPED', 'STOPPED']);
  } finally {
    await connection.close();
  }
});

test("one creation fails: the Workers made are run down, the connection closes, and the error is the first asked's, not the first to fail", async () => {
  const connection = await NativeConnection.connect({ address: temporalAddress() });
  const workers: Worker[] = [];
  const keep = async (creating: Promise<Worker[]>) => {
    const ws = await creating;
    workers.push(...ws);
    return ws;
  };
  try {
    // the first asked fails last: it must still be the one reported
    const attempt = workersAllOrNone([
      failingAfter(1_500, 'the common queue could not be polled'),
      keep(made(connection, uniqueQueue('start-c'))),
      failingAfter(10, 'a database queue could not be polled'),
      keep(made(connection, uniqueQueue('start-d'))),
    ]);
    await expect(attempt).rejects.toThrow('the common queue could not be polled');
    expect(workers).toHaveLength(2);
    expect(workers.map((w) => w.getState())).toEqual(['STOPPED', 'STOPPED']);
  } finally {
    // throws IllegalStateError while a Worker made on it holds a reference
    await connection.close();
  }
});
