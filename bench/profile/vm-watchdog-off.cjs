/**
 * A measurement aid, never for a deployment: Node runs `vm` code with a `timeout` under a
 * watchdog thread it creates and joins on every call (nodejs/node#47739), and the Temporal
 * TypeScript SDK enters a workflow's sandbox with its isolateExecutionTimeout on every call,
 * several times per workflow task. Loaded with NODE_OPTIONS=--require (which reaches the SDK's
 * workflow threads too), this drops that timeout, and with it the SDK's detection of a workflow
 * task stuck in a loop, to measure what the watchdogs cost: `NODE_OPTIONS="--require
 * $PWD/bench/profile/vm-watchdog-off.cjs" npx tsx bench/task-hops.ts` against the same without
 * (bench/RESULTS-LOG.md, "The SDK's watchdog threads").
 */
const vm = require('node:vm');

const runInContext = vm.Script.prototype.runInContext;
vm.Script.prototype.runInContext = function runWithoutWatchdog(context, options) {
  if (!options || options.timeout === undefined) return runInContext.call(this, context, options);
  const { timeout: _timeout, ...rest } = options;
  return runInContext.call(this, context, rest);
};
