#!/usr/bin/env node
/**
 * The operator's command, `backfill` (package.json "bin"): start, plan, status, watch, pause,
 * resume, cancel, set-limits, retry-failed, list, schema, worker, dev, demo, setup.
 * Everything lives in src/cli; this file only runs it.
 */
import { main } from './cli/program';
import { endForClosedOutput } from './dev/shutdown';

if (require.main === module) {
  // a reader that stops early (`backfill list -o jsonl | head`, `backfill demo 2>&1 | head`)
  // closes the pipe: that ends the command, quietly, as for any Unix tool
  for (const output of [process.stdout, process.stderr])
    output.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') return endForClosedOutput();
      throw err;
    });
  // exit explicitly: open gRPC channels or pools must not keep a finished command alive
  void main(process.argv).then((code) => process.exit(code));
}

export { main };
