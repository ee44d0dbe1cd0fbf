/**
 * freePort picks below the kernel's range for outgoing connections' local ports, where a port
 * free when picked cannot become the local end of a connection opened before it is bound.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, freePortBetween, outgoingPortRange } from '../../src/dev/free-port';

const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-port-range-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

test("outgoingPortRange reads Linux's ip_local_port_range, and nothing from what is not one", () => {
  expect(outgoingPortRange(file('range', '32768\t60999\n'))).toEqual({ low: 32768, high: 60999 });
  expect(outgoingPortRange(file('spaces', '  1024 65535 '))).toEqual({ low: 1024, high: 65535 });
  expect(outgoingPortRange(path.join(dir, 'absent'))).toBeUndefined();
  expect(outgoingPortRange(file('garbage', 'auto'))).toBeUndefined();
  expect(outgoingPortRange(file('reversed', '60999 32768'))).toBeUndefined();
});

const range = outgoingPortRange();
(range && range.low >= 16_000 ? test : test.skip)('freePort picks a port that binds, below the range outgoing connections take theirs from', async () => {
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(15_000);
    expect(port).toBeLessThan(range!.low);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  }
});

test('picks made before any of them is bound are never the same port', async () => {
  const low = 15_000 + Math.floor(Math.random() * 10_000);
  const picks: (number | undefined)[] = [];
  for (let i = 0; i < 4; i++) picks.push(await freePortBetween(low, low + 6, 200));
  const found = picks.filter((p): p is number => p !== undefined);
  expect(found.length).toBeGreaterThanOrEqual(3);
  expect(new Set(found).size).toBe(found.length);
  for (const p of found) expect(p >= low && p < low + 6).toBe(true);
});
