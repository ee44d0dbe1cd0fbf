/** Structured JSON logs (pino) on stderr, so stdout stays clean for `-o json`. */
import pino from 'pino';

export function createLogger(name = 'backfill') {
  return pino({ name, level: process.env.LOG_LEVEL || 'info' }, pino.destination(2));
}
