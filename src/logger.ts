/** Structured JSON logs (pino) on stderr, so stdout stays clean for `-o json`. */
import pino from 'pino';
import { envSettings } from './util/env-settings';

export function createLogger(name = 'backfill', level: string = envSettings().LOG_LEVEL) {
  return pino({ name, level }, pino.destination(2));
}
