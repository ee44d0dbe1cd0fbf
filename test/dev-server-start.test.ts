/**
 * Starting the Temporal dev server on a busy machine: a port chosen free can be taken by another
 * process before the server binds it. On ports of its own choosing the start tries again on fresh
 * ones; on a port the caller fixed it fails at once, saying which port and why.
 */
import { ExitedWhileStarting, freePort, isServerUp, startDevServer, type DevServer } from '../src/dev/temporal-server';
import { firstChoiceTaken, takenPort } from './helpers/taken-port';

test('a port of its own choosing taken before the server binds it: the server starts on the next one', async () => {
  const taken = await takenPort();
  const said: string[] = [];
  const { choosePort, chosen } = firstChoiceTaken(taken.port, freePort);
  let server: DevServer | undefined;
  try {
    server = await startDevServer({
      cliPath: process.env.TEMPORAL_CLI!,
      uiPort: null,
      logLevel: 'error',
      say: (line) => said.push(line),
      // the first port "found free" is the one another process holds by the time the server binds it
      choosePort,
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

test('a port nothing listens on is known to hold no server at once, without the wait a starting server gets', async () => {
  const port = await freePort();
  const started = Date.now();
  expect(await isServerUp(`127.0.0.1:${port}`)).toBe(false);
  // a refused connection ends it: the wait for an answer is two seconds
  expect(Date.now() - started).toBeLessThan(1_000);
});

test('a port that accepts but never answers as Temporal is given its two seconds, then said to hold no server', async () => {
  const taken = await takenPort();
  try {
    const started = Date.now();
    expect(await isServerUp(`127.0.0.1:${taken.port}`)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
  } finally {
    await taken.release();
  }
});
