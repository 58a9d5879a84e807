// The structured logger (pino): JSON lines on stdout, written without ever blocking the service.
import fs from 'node:fs';
import pino from 'pino';

/** Structured JSON-lines logger (pino): one object a line, easy to grep and to ship. */
export type Logger = pino.Logger;

/** Log lines kept in memory while stdout cannot take them; past this, lines are dropped (and counted). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** What the service's own stdout destination tells: lines dropped because nobody read them. */
export interface LogOutput {
  dropped(): number;
  /** Write out what is buffered, waiting at most `ms`; then give up on a reader that does not read (exit follows). */
  flush(ms: number): Promise<void>;
}

/**
 * stdout, asynchronously, with a bounded buffer. A log reader that stalls (a log shipper that
 * stopped reading, a full pipe) or has gone (EPIPE) must never stall the sorter link or the HTTP
 * service: with pino's default synchronous write the event loop would wait in the write for as
 * long as the pipe is full, and not even SIGTERM would be handled. Lines that do not fit are
 * dropped and counted instead.
 */
export function stdoutDestination(): { stream: pino.DestinationStream; output: LogOutput } {
  let dropped = 0;
  // Once the service is exiting, a full pipe is given up on: pino's exit hook would otherwise
  // retry its final synchronous flush for as long as nobody reads (the process never ends).
  let exiting = false;
  const stream = pino.destination({ dest: 1, sync: false, maxLength: MAX_BUFFERED_BYTES, retryEAGAIN: () => !exiting });
  stream.on('drop', () => (dropped += 1));
  // EPIPE (the reader closed) and the like: nothing useful can be done with a log line any more.
  stream.on('error', () => {});
  boundFinalFlush(stream, () => (dropped += 1));
  const output: LogOutput = {
    dropped: () => dropped,
    flush: (ms) =>
      new Promise<void>((done) => {
        const resolve = () => {
          exiting = true;
          done();
        };
        const timer = setTimeout(resolve, ms);
        timer.unref();
        try {
          stream.flush(() => {
            clearTimeout(timer);
            resolve();
          });
        } catch {
          resolve();
        }
      }),
  };
  return { stream, output };
}

/**
 * pino flushes its destination synchronously as the process exits (its exit hook: a clean stop's
 * last lines, a crash's). sonic-boom retries a write that fails there every 100 ms for as long as
 * it fails, whatever the error: on a terminal that hung up (EIO) or a full disk (ENOSPC) the
 * process would never end, and a stop would hang until a supervisor killed it. Here that final
 * flush gives up on the first write that fails: what is left of the log is dropped (counted), and
 * the process ends.
 */
function boundFinalFlush(stream: pino.DestinationStream, onDrop: () => void): void {
  const target = stream as pino.DestinationStream & { flushSync?: () => void };
  const flushSync = target.flushSync?.bind(target);
  if (!flushSync) return;
  const files = fs as { writeSync: typeof fs.writeSync };
  target.flushSync = () => {
    const writeSync = files.writeSync;
    // Only for the length of this synchronous call: sonic-boom writes through fs.writeSync.
    files.writeSync = ((fd: number, buffer: string | NodeJS.ArrayBufferView, ...rest: unknown[]) => {
      try {
        return (writeSync as (...a: unknown[]) => number)(fd, buffer, ...rest);
      } catch {
        onDrop();
        return typeof buffer === 'string' ? Buffer.byteLength(buffer, 'utf8') : buffer.byteLength;
      }
    }) as typeof fs.writeSync;
    try {
      flushSync();
    } finally {
      files.writeSync = writeSync;
    }
  };
}

/** The service's logger at a level; writes to `destination` (default: stdout, as above). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, base: { service: 'sorter-integration' }, timestamp: pino.stdTimeFunctions.isoTime },
    destination ?? stdoutDestination().stream,
  );
}
