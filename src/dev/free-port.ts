/**
 * A port the operating system says is free now. Only a guess for later: another process can take
 * it before it is bound, so the servers started on one try again on another when they cannot
 * bind (temporal-server.ts, postgres.ts).
 */
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A start that failed in a way another port might not. */
export class ExitedWhileStarting extends Error {}

/**
 * Starts a server on ports it chose, again on fresh ones when it exits while starting, at most
 * `attempts` times. `portsAreOurs` false (the caller fixed a port) fails at once: that port is the
 * caller's to change. Only `ExitedWhileStarting` is tried again; `say` hears each retry.
 */
export async function onFreshPorts<T>(
  start: () => Promise<T>,
  options: { portsAreOurs: boolean; say?: (line: string) => void; again: string; attempts?: number },
): Promise<T> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (!(err instanceof ExitedWhileStarting) || !options.portsAreOurs || attempt >= attempts) throw err;
      options.say?.(`${err.message}; ${options.again}`);
    }
  }
}
