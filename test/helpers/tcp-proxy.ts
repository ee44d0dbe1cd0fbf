/**
 * A TCP proxy on loopback that a test controls, to play the network between a client and a
 * server: `cut` drops every connection and refuses new ones (a server gone, connections reset)
 * until `restore`; `stall` lets nothing through in either direction and leaves new connections
 * unanswered (a partition: packets lost, no reset) until `unstall`, when everything carries on.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  stall(): void;
  unstall(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  /** Connections accepted during a stall: connected upstream when it ends. */
  let waiting: (() => void)[] = [];
  let server: net.Server;

  const bridge = (client: net.Socket) => {
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    // one side failing or closing closes the other, as a connection through a real network would
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
    if (stalled) for (const s of [client, upstream]) s.pause();
  };

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server = net.createServer((client) => {
        if (!stalled) return bridge(client);
        client.pause();
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.on('error', () => undefined);
        waiting.push(() => {
          if (!client.destroyed) bridge(client);
        });
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
  const port = await listen(0);
  const stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return {
    port,
    cut: stop,
    restore: async () => void (await listen(port)),
    stall() {
      stalled = true;
      for (const s of sockets) s.pause();
    },
    unstall() {
      stalled = false;
      for (const s of sockets) s.resume();
      const pending = waiting;
      waiting = [];
      for (const connect of pending) connect();
    },
    close: stop,
  };
}
