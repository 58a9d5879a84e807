// The structured logger (pino): JSON lines on stdout.
import pino from 'pino';

/** Structured JSON-lines logger (pino): one object a line, easy to grep and to ship. */
export type Logger = pino.Logger;

/** The service's logger at a level; writes to stdout. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { service: 'sorter-integration' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
