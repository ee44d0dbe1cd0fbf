/**
 * The Temporal SDK's own logs (worker state, workflow and activity failures) as pino JSON lines
 * on stderr, like ours, under LOG_LEVEL: one format for a log shipper to read, where the SDK's
 * DefaultLogger printed plain text. An Error in the metadata keeps its message and stack.
 */
import type { Logger as SdkLogger, LogLevel, LogMetadata } from '@temporalio/common';
import type { Logger } from 'pino';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

export function sdkLoggerFor(logger: Logger): SdkLogger {
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(meta ?? {})) {
      // pino serialises an Error under `err` (type, message, stack); anywhere else it would print as {}
      if (value instanceof Error) {
        if (key === 'error' || key === 'failure') fields.err = value;
        else fields[key] = { type: value.name, message: value.message, stack: value.stack };
      } else fields[key] = value;
    }
    logger[LEVELS[level] ?? 'info'](fields, message);
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}
