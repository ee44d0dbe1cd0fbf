#!/usr/bin/env node
/**
 * The operator's command, `backfill` (package.json "bin"): start, plan, status, watch, pause,
 * resume, cancel, set-limits, retry-failed, list, schema, worker, dev, demo, setup.
 * Everything lives in src/cli; this file only runs it.
 */
import { main } from './cli/program';

if (require.main === module) {
  // a reader that stops early (`backfill list -o jsonl | head`) closes the pipe: that ends the command, quietly, as for any Unix tool
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  // exit explicitly: open gRPC channels or pools must not keep a finished command alive
  void main(process.argv).then((code) => process.exit(code));
}

export { main };
