// Test helper: a real logger (lib/process/logger.ts) whose lines the test can read.
import { Writable } from 'node:stream';
import { type Logger, createLogger } from '../../lib/process/logger';

/** One parsed log line. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger at `level` writing parsed lines into `lines`. */
export function capturingLogger(level = 'info'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).trim().split('\n')) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}
