/**
 * The Temporal SDK's own logs (worker state, workflow and activity failures) as pino JSON lines
 * on stderr, like ours, under LOG_LEVEL: one format for a log shipper to read, where the SDK's
 * DefaultLogger printed plain text. An Error in the metadata keeps its message and stack.
 */
import type { Logger as SdkLogger, LogLevel, LogMetadata } from '@temporalio/common';
import { makeTelemetryFilterString, type TelemetryOptions } from '@temporalio/worker';
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

/**
 * The SDK core's own logs (Rust: polling, activation completions, server errors) forwarded to
 * the logger above instead of printed by core in its own text format: one format on stderr, and
 * LOG_LEVEL decides what shows. Core's warnings are always forwarded (LOG_LEVEL then filters
 * them); its debug and trace lines only when LOG_LEVEL asks for them.
 */
export function coreLogForwarding(level: string): NonNullable<TelemetryOptions['logging']> {
  const verbose = level === 'debug' || level === 'trace' ? (level.toUpperCase() as 'DEBUG' | 'TRACE') : undefined;
  return { forward: {}, filter: makeTelemetryFilterString({ core: verbose ?? 'WARN', other: verbose ?? 'ERROR' }) };
}
