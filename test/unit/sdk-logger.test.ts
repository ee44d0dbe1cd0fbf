import { Writable } from 'node:stream';
import pino from 'pino';
import { makeTelemetryFilterString } from '@temporalio/worker';
import { coreLogForwarding, sdkLoggerFor } from '../../src/sdk-logger';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, logger: sdkLoggerFor(pino({ name: 'temporal-sdk', level }, stream)) };
}

test("the SDK's logs come out as pino JSON lines with their metadata, an error with its message and stack", () => {
  const { lines, logger } = capture();
  logger.info('Worker state changed', { sdkComponent: 'worker', taskQueue: 'backfill', state: 'RUNNING' });
  logger.log('WARN', 'Workflow failed', { sdkComponent: 'workflow', error: new Error('partition id:1 failed') });
  expect(lines).toEqual([
    expect.objectContaining({ level: 30, name: 'temporal-sdk', msg: 'Worker state changed', sdkComponent: 'worker', taskQueue: 'backfill', state: 'RUNNING' }),
    expect.objectContaining({
      level: 40,
      msg: 'Workflow failed',
      err: expect.objectContaining({ type: 'Error', message: 'partition id:1 failed', stack: expect.stringContaining('Error') }),
    }),
  ]);
});

test('LOG_LEVEL filters them as it filters ours', () => {
  const { lines, logger } = capture('warn');
  logger.debug('noise');
  logger.info('more noise');
  logger.error('kept');
  expect(lines.map((l) => l.msg)).toEqual(['kept']);
});

test("the SDK core's logs are forwarded to that logger, warnings always and debug lines only when LOG_LEVEL asks", () => {
  for (const level of ['error', 'warn', 'info']) {
    expect(coreLogForwarding(level)).toEqual({ forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) });
  }
  expect(coreLogForwarding('debug')).toEqual({ forward: {}, filter: makeTelemetryFilterString({ core: 'DEBUG', other: 'DEBUG' }) });
  expect(coreLogForwarding('trace').filter).toContain('temporalio_sdk_core=TRACE');
});
