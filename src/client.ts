#!/usr/bin/env node
/**
 * The operator's command, `backfill` (package.json "bin"): start, plan, status, watch, pause,
 * resume, cancel, set-limits, retry-failed, list, schema, worker, dev, demo, setup.
 * Everything lives in src/cli; this file only runs it.
 */
import { main } from './cli/program';

if (require.main === module) {
  // exit explicitly: open gRPC channels or pools must not keep a finished command alive
  void main(process.argv).then((code) => process.exit(code));
}

export { main };
