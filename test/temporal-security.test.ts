/**
 * What Temporal users expect of a tool that talks to their cluster: mutual TLS configured as
 * the temporal CLI is (a client certificate, a CA, a server name), and payloads encrypted so
 * that Temporal stores nothing readable of a spec, a plan or an error. The TLS test puts a
 * real TLS endpoint that demands a client certificate in front of the dev server; the
 * encryption test runs a backfill (with failing partitions) and reads its histories without
 * the key.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { startRun, waitForResult } from '../src/operations';
import { partitionWorkflowId } from '../src/domain/ids';
import { temporalConfig } from '../src/temporal/config';
import { connectClient } from '../src/temporal/connect';
import { useTestEnvironment } from './helpers/environment';
import { historiesText } from './helpers/histories';
import { ordersSpec, writeSpec } from './helpers/orders';
import { encryptedWorkflowBundle, startTestWorker, temporalAddress, uniqueQueue } from './helpers/temporal';

const env = useTestEnvironment('tsec', { rows: 3000, worker: false });

describe('payload encryption (BACKFILL_PAYLOAD_KEY)', () => {
  const payloadKeys = { current: randomBytes(32), old: [] };
  const REASON = 'test: re-rate the customers of project nightingale';

  test('a run with encryption on works, and its histories reveal nothing of spec, plan or errors without the key', async () => {
    // fails the partitions above id 6000, so errors go through Temporal as well
    await env.db.pool.query('ALTER TABLE app.orders_usd ADD CONSTRAINT orders_usd_small CHECK (id < 6000)');
    const taskQueue = uniqueQueue('encrypted');
    const worker = await startTestWorker(taskQueue, { temporal: { payloadKeys }, bundle: await encryptedWorkflowBundle() });
    const sealed = await connectClient({ address: temporalAddress(), namespace: 'default', payloadKeys });
    const plain = await connectClient({ address: temporalAddress(), namespace: 'default' });
    try {
      const spec = ordersSpec(env.db.envVar, {
        name: 'encrypted',
        reason: REASON,
        partition: { by: 'range', column: 'id', size: 1000 },
        limits: { chunkSize: 500, concurrency: 4 },
      });
      const started = await startRun({ client: sealed.client, taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
      const result = await waitForResult(sealed.client.workflow.getHandle(started.workflowId));
      // the CHECK fails some partitions: their errors go through Temporal too
      expect(result.status).toBe('failed');
      expect(result.partitions.failed).toBeGreaterThan(0);
      expect(result.partitions.succeeded).toBeGreaterThan(0);

      const { rows } = await env.db.pool.query<{ partition_id: string }>('SELECT partition_id FROM backfill.partitions WHERE run_id = $1', [started.runId]);
      const ids = [started.workflowId, ...rows.map((r) => partitionWorkflowId(spec.name, started.runId, r.partition_id))];
      const stored = await historiesText(plain.client, ids);
      expect(stored).toContain('binary/encrypted');
      for (const secret of [REASON, 'app.orders_usd', 'usd_rate', 'orders_usd_small', 'violates']) expect(stored).not.toContain(secret);
      // without the key the result cannot even be read
      await expect(waitForResult(plain.client.workflow.getHandle(started.workflowId))).rejects.toThrow();
      // with it, everything is there
      expect(await historiesText(sealed.client, [started.workflowId])).toContain('binary/encrypted');
      const described = await sealed.client.workflow.getHandle(started.workflowId).describe();
      expect(await described.staticSummary()).toContain(REASON);
    } finally {
      await worker.stop();
      await sealed.close();
      await plain.close();
      await env.db.pool.query('ALTER TABLE app.orders_usd DROP CONSTRAINT orders_usd_small');
    }
  });
});

describe('mutual TLS (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-mtls-'));
  const file = (name: string) => path.join(dir, name);
  let server: tls.Server;
  let port: number;

  beforeAll(async () => {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=backfill test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
    for (const [name, cn] of [
      ['server', 'localhost'],
      ['client', 'backfill-worker'],
    ]) {
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
      // extensions make these X.509 v3 certificates, the only version TLS libraries such as rustls accept
      const ext = ['-extfile', writeExt(name === 'server' ? 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n' : 'extendedKeyUsage=clientAuth\n')];
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-out', `${name}.pem`, ...ext);
    }
    // a TLS endpoint that demands a client certificate signed by the CA, in front of the dev server
    const [host, upstreamPort] = temporalAddress().split(':');
    server = tls.createServer(
      {
        key: readFileSync(file('server.key')),
        cert: readFileSync(file('server.pem')),
        ca: readFileSync(file('ca.pem')),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => {
        const upstream = net.connect(Number(upstreamPort), host);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      },
    );
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function writeExt(text: string): string {
    require('node:fs').writeFileSync(file('ext.cnf'), text);
    return file('ext.cnf');
  }

  const tlsEnv = () => ({
    TEMPORAL_CONFIG_FILE: file('absent.toml'),
    TEMPORAL_ADDRESS: `localhost:${port}`,
    TEMPORAL_TLS_CERT: file('client.pem'),
    TEMPORAL_TLS_KEY: file('client.key'),
    TEMPORAL_TLS_CA: file('ca.pem'),
  });

  test('a worker and a client configured as the temporal CLI is run a backfill over mTLS', async () => {
    const config = { ...temporalConfig(tlsEnv()), taskQueue: uniqueQueue('mtls') };
    expect(config.connection?.tls).toBeTruthy();
    const worker = await startTestWorker(config.taskQueue, { temporal: { address: config.address, connection: config.connection } });
    const connected = await connectClient(config);
    try {
      const spec = ordersSpec(env.db.envVar, { name: 'mtls', partition: { by: 'range', column: 'id', size: 5000 } });
      const started = await startRun({ client: connected.client, taskQueue: config.taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
      const result = (await started.handle.result()) as { status: string };
      expect(result.status).toBe('succeeded');
    } finally {
      await worker.stop();
      await connected.close();
    }
  });

  test('without a client certificate the server refuses the connection, and the error says where and how', async () => {
    const { TEMPORAL_TLS_CERT: _c, TEMPORAL_TLS_KEY: _k, ...withoutClientCert } = tlsEnv();
    const config = temporalConfig(withoutClientCert);
    await expect(connectClient(config)).rejects.toThrow(
      new RegExp(
        `^cannot reach Temporal at localhost:${port} over TLS \\(.*\\); start it with: backfill dev, or check TEMPORAL_ADDRESS and the TLS settings$`,
        's',
      ),
    );
  });
});
