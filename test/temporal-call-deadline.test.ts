/**
 * An activity's call to Temporal on a connection that stalled without a reset (packets lost,
 * nothing closed) ends at its deadline instead of waiting for ever, and the same connection
 * carries on once the network does. The client is the kind an activity holds: the worker's
 * native connection.
 */
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { withCallDeadline } from '../src/activities/temporal-call-deadline';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy';
import { temporalAddress } from './helpers/temporal';

let proxy: TcpProxy;
let connection: NativeConnection;
let client: Client;

beforeAll(async () => {
  const [host, port] = temporalAddress().split(':');
  proxy = await startTcpProxy(host, Number(port));
  connection = await NativeConnection.connect({ address: `127.0.0.1:${proxy.port}` });
  client = new Client({ connection, namespace: 'default' });
});

afterAll(async () => {
  await connection?.close();
  await proxy?.close();
});

const describeNobody = () => client.workflow.getHandle('backfill-call-deadline-nobody').describe();

test('a call on a stalled connection fails at its deadline, and the connection works again after the stall', async () => {
  await expect(describeNobody()).rejects.toBeInstanceOf(WorkflowNotFoundError); // the connection is up

  proxy.stall();
  const started = Date.now();
  try {
    const failed = await withCallDeadline(client, () => client.workflow.getHandle('backfill-call-deadline-nobody').signal('nothing'), 1_500).then(
      () => undefined,
      (err: Error) => err,
    );
    // the native connection's own words for a passed deadline
    expect(String(failed?.cause)).toMatch(/Timeout expired/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(6_000);
  } finally {
    proxy.unstall();
  }

  // the stall is over: the next call with a deadline is answered (here: there is no such workflow)
  await expect(withCallDeadline(client, describeNobody)).rejects.toBeInstanceOf(WorkflowNotFoundError);
});
