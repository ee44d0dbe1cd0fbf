/**
 * Times every query a process sends through node-postgres, by statement, for the chunk profile
 * (bench/chunk-profile.ts). Loaded into worker processes with NODE_OPTIONS=--require, or required
 * by the bench itself (which reads globalThis.__pgTiming); a worker hands over what it measured on
 * SIGWINCH.
 */
const fs = require('node:fs');
const path = require('node:path');
const pg = require('pg');

const stats = new Map();

function record(text, started) {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const key = text.replace(/\s+/g, ' ').trim().slice(0, 600);
  const s = stats.get(key) ?? { count: 0, ms: 0 };
  s.count++;
  s.ms += ms;
  stats.set(key, s);
}

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function timedQuery(config, values, callback) {
  const text = typeof config === 'string' ? config : config && config.text;
  const started = process.hrtime.bigint();
  const result = query.call(this, config, values, callback);
  if (text && result && typeof result.then === 'function') {
    result.then(
      () => record(text, started),
      () => record(text, started),
    );
  }
  return result;
};

globalThis.__pgTiming = {
  reset: () => stats.clear(),
  snapshot: () => Object.fromEntries(stats),
};

// the profile asks a worker for what it counted since the last ask with SIGWINCH (ignored by
// default, and not one of the signals on which the Temporal runtime shuts a worker down): it
// writes BENCH_PG_TIMING_DIR/<pid>.json and starts counting afresh
process.on('SIGWINCH', () => {
  if (process.env.BENCH_PG_TIMING_DIR) {
    fs.writeFileSync(path.join(process.env.BENCH_PG_TIMING_DIR, `${process.pid}.json`), JSON.stringify(Object.fromEntries(stats)));
  }
  stats.clear();
});
