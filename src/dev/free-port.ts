/**
 * A port the operating system says is free now. Only a guess for later: another process can take
 * it before it is bound, so the servers started on one try again on another when they cannot
 * bind (temporal-server.ts, postgres.ts).
 *
 * Picked below the kernel's range for outgoing connections' local ports where it has one (Linux):
 * a port from that range, free when picked, can become the local end of any connection this
 * process or another opens before the server binds it (a pool connecting to PostgreSQL while the
 * dev server starts). Below it, only another server can take it.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Above the ports well-known servers use by default (PostgreSQL 5432, Temporal 7233, its UI 8233, …). */
const LOWEST = 15_000;

export async function freePort(): Promise<number> {
  const outgoing = outgoingPortRange();
  if (outgoing && outgoing.low - LOWEST >= 1_000) {
    const port = await freePortBetween(LOWEST, outgoing.low);
    if (port !== undefined) return port;
  }
  return kernelChosen();
}

/** Ports handed out lately: one caller's several picks (a server's ports) are never the same port, though none is bound yet. */
const handedOut: number[] = [];

/** A free port in [low, high), picked at random, or undefined after `tries` taken ones. */
export async function freePortBetween(low: number, high: number, tries = 20): Promise<number | undefined> {
  for (let i = 0; i < tries; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.includes(port) || !(await bindable(port))) continue;
    handedOut.push(port);
    if (handedOut.length > 256) handedOut.shift();
    return port;
  }
  return undefined;
}

/** Linux's `ip_local_port_range`, or undefined where there is none to read. */
export function outgoingPortRange(path = '/proc/sys/net/ipv4/ip_local_port_range'): { low: number; high: number } | undefined {
  try {
    const [low, high] = readFileSync(path, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) && low > 0 && high >= low ? { low, high } : undefined;
  } catch {
    return undefined;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function kernelChosen(): Promise<number> {
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
