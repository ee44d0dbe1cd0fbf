/**
 * A port another process holds, as when a busy machine hands a port "found free" to someone else
 * before the server binds it. Held in another process: held by a socket in the test's own process,
 * a retried start was seen to wait with the test's timers silent.
 */
import { spawn } from 'node:child_process';

const HOLDER = `const s = require('node:net').createServer((c) => c.destroy()); s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

export async function takenPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder = spawn(process.execPath, ['-e', HOLDER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    holder.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    holder.once('exit', (code) => reject(new Error(`the port holder exited with ${code}`)));
  });
  return {
    port,
    release: () =>
      new Promise<void>((resolve) => {
        if (holder.exitCode !== null) return resolve();
        holder.once('exit', () => resolve());
        holder.kill();
      }),
  };
}

/** A `choosePort` whose first choice is `taken`, then free ports; `chosen` records them in order. */
export function firstChoiceTaken(taken: number, freePort: () => Promise<number>): { choosePort: () => Promise<number>; chosen: number[] } {
  const chosen: number[] = [];
  return {
    chosen,
    choosePort: async () => {
      const port = chosen.length === 0 ? taken : await freePort();
      chosen.push(port);
      return port;
    },
  };
}
