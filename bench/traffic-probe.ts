/**
 * The live-traffic probe as a process of its own, as an application is: single-row reads and
 * updates by primary key at a fixed rate on one connection, each one's latency recorded. Run
 * in the benchmark's process, the probe shared its event loop with the worker there and timed
 * the worker's garbage collection and chunk handling as the database's (bench/RESULTS.md,
 * "Live traffic"). Started by bench/live-traffic.ts with fork(); it answers the message
 * `stop` with its latencies and exits.
 */
import pg from 'pg';

export interface ProbeLatencies {
  /** Every operation's, in ms. */
  latencies: number[];
  /** The updates' alone (each ends with a commit). */
  updates: number[];
  /** The reads' alone (no commit waits for the disk). */
  reads: number[];
}

export interface ProbeSettings {
  url: string;
  /** Operations a second. */
  rate: number;
  /** The source's rows: ids are spread over all of them. */
  rows: number;
}

async function probe(settings: ProbeSettings): Promise<void> {
  const client = new pg.Client({ connectionString: settings.url, application_name: 'live-traffic-probe' });
  await client.connect();
  const recorded: ProbeLatencies = { latencies: [], updates: [], reads: [] };
  let running = true;
  process.on('message', (m) => {
    if (m === 'stop') running = false;
  });
  process.send?.('ready');
  const interval = 1000 / settings.rate;
  let next = performance.now();
  for (let n = 1; running; n++) {
    // ids spread over the whole key range: the backfill rewrites these rows while we touch them
    const id = ((n * 2654435761) % settings.rows) * 3;
    const started = performance.now();
    if (n % 2 === 0) await client.query('SELECT * FROM bench.orders_usd WHERE id = $1', [id]);
    else await client.query('UPDATE bench.orders SET amount_cents = amount_cents WHERE id = $1', [id]);
    const ms = performance.now() - started;
    recorded.latencies.push(ms);
    (n % 2 !== 0 ? recorded.updates : recorded.reads).push(ms);
    next += interval;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await client.end();
  process.send?.(recorded, () => process.exit(0));
}

if (require.main === module) {
  const settings = JSON.parse(process.argv[2]) as ProbeSettings;
  probe(settings).catch((err) => {
    process.stderr.write(`traffic probe failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
