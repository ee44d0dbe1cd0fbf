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
