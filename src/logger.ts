/** Structured JSON logs (pino) on stderr, so stdout stays clean for `-o json`. */
import pino from 'pino';
import { envSettings } from './util/env-settings';

export function createLogger(name = 'backfill') {
  return pino({ name, level: envSettings().LOG_LEVEL }, pino.destination(2));
}
