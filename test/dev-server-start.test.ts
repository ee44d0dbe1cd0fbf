/**
 * Starting the Temporal dev server on a busy machine: a port chosen free can be taken by another
 * process before the server binds it. On ports of its own choosing the start tries again on fresh
 * ones; on a port the caller fixed it fails at once, saying which port and why.
 */
import { spawn } from 'node:child_process';
import { ExitedWhileStarting, freePort, isServerUp, startDevServer, type DevServer } from '../src/dev/temporal-server';

/** A port another process holds, as when a busy machine hands a port "found free" to someone else first. */
async function takenPort(): Promise<{ port: number; release: () => Promise<void> }> {
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

const HOLDER = `const s = require('node:net').createServer((c) => c.destroy()); s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

test('a port of its own choosing taken before the server binds it: the server starts on the next one', async () => {
  const taken = await takenPort();
  const said: string[] = [];
  const chosen: number[] = [];
  let server: DevServer | undefined;
  try {
    server = await startDevServer({
      cliPath: process.env.TEMPORAL_CLI!,
      uiPort: null,
      logLevel: 'error',
      say: (line) => said.push(line),
      // the first port "found free" is the one another process holds by the time the server binds it
      choosePort: async () => {
        const port = chosen.length === 0 ? taken.port : await freePort();
        chosen.push(port);
        return port;
      },
    });
    expect(server.address).toBe(`127.0.0.1:${chosen[1]}`);
    expect(await isServerUp(server.address)).toBe(true);
    expect(said.join('\n')).toMatch(new RegExp(`on port ${taken.port} exited .* while starting: .*address already in use.*; starting it again on other ports`));
  } finally {
    await server?.stop();
    await taken.release();
  }
});

test('a port the caller fixed that is taken: the start fails at once and names the port and the cause', async () => {
  const taken = await takenPort();
  const started = Date.now();
  try {
    const failure = startDevServer({ cliPath: process.env.TEMPORAL_CLI!, port: taken.port, uiPort: null, logLevel: 'error' });
    await expect(failure).rejects.toBeInstanceOf(ExitedWhileStarting);
    await expect(failure).rejects.toThrow(new RegExp(`port ${taken.port} .*address already in use`));
    expect(Date.now() - started).toBeLessThan(60_000);
  } finally {
    await taken.release();
  }
});
