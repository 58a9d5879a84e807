// Service_PLC.log: one line per telegram in and out, rotated by size; and its parser.
import fs from 'node:fs';
import path from 'node:path';
import { freeBytes } from '../host/disk';

/**
 * One line of Service_PLC.log, the sorter link's traffic log (docs/traffic-log.md):
 *   2026-11-21T14:03:07.123Z IN  <STX>0151PLC01 WCS01 000042REQUD...<ETX>
 * IN is sorter to service, OUT is service to sorter. The markers keep trailing spaces visible.
 */
export type Direction = 'IN' | 'OUT';

export interface TrafficLine {
  time: string;
  direction: Direction;
  content: string;
}

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (IN|OUT) +<STX>(.*)<ETX>$/;

/** Format a telegram's content (the text between STX and ETX) as a log line, without newline. */
export function formatTrafficLine(time: Date, direction: Direction, content: string): string {
  return `${time.toISOString()} ${direction.padEnd(3)} <STX>${content}<ETX>`;
}

/** Parse one log line; undefined if it is not a traffic line. Blank and '#' lines are not data. */
export function parseTrafficLine(line: string): TrafficLine | undefined {
  const [, time, direction, content] = LINE.exec(line.replace(/\r$/, '')) ?? [];
  if (time === undefined || direction === undefined || content === undefined) return undefined;
  return { time, direction: direction === 'IN' ? 'IN' : 'OUT', content };
}

/** What the traffic log tells its owner: it stopped writing (and why), or writes again. */
export interface TrafficLogEvents {
  failed(err: Error): void;
  recovered(droppedLines: number): void;
  /** Free space on its file system fell below the reserve (paused), or is back (with the lines dropped meanwhile). */
  reserve?(paused: boolean, freeBytes: number, droppedLines: number): void;
}

/** How the traffic log is kept. */
export interface TrafficLogOptions {
  /** Rotate at this size. */
  maxBytes: number;
  /** Rotated files kept. */
  keep: number;
  /** Write only while the file system keeps at least this much free (0: no reserve). */
  minFreeBytes?: number;
}

/** After a failed write (a full disk), how long the log waits before it opens its file again. */
const RETRY_MS = 5000;
/** How often free space is looked at, at most (asynchronously; the cached figure serves meanwhile). */
const FREE_CHECK_MS = 1000;
/**
 * A log that writes looks at the free space again only once it has written this much since its
 * last look: what it can take of the reserve meanwhile is nothing beside the reserve (100 MB by
 * default), and a quiet line's LIFE lines (about 70 bytes a second) no longer cost a look, a
 * thread-pool hop and a wake-up of the main thread every 2 s. A paused log looks every
 * FREE_CHECK_MS, to resume.
 */
const FREE_CHECK_BYTES = 64 * 1024;
/** Writing resumes only with this much more than the reserve free, so that it does not flap. */
const RESUME_FACTOR = 1.25;
/**
 * Lines are gathered and handed to the file this often (ms), or at FLUSH_BYTES: one write call and
 * one thread-pool hop for many telegrams instead of one each. Measured at 500 items/s (medians of
 * 4 alternating runs): the service's CPU per item 1,817 -> 1,747 us. Each hand-over wakes the main
 * thread (its timer, then the write's completion) and a pool thread: at 50 ms that was 17 a second
 * at 50 items/s, at 100 ms half as many. docs/traffic-log.md promises an operator at most this long.
 */
export const FLUSH_MS = 100;
const FLUSH_BYTES = 64 * 1024;

/**
 * Appends traffic lines to Service_PLC.log, rotating by size: Service_PLC.log.1 is the newest
 * rotated file, up to `keep` of them. Lines are gathered for FLUSH_MS and written in order
 * through a stream (libuv's thread pool), so a slow disk never blocks the event loop; a crash
 * may lose the last lines still in memory, those of the last FLUSH_MS and any a slow disk has
 * not taken yet (the database, not this log, is the record of what was committed). A write that fails
 * (a full disk, a removed folder) never stops the service: the log says so once, drops and counts
 * lines, and opens the file again every 5 s until it can write.
 *
 * The log shares its disk with the queue database, and the database comes first: below
 * `minFreeBytes` free the log pauses (drops and counts lines) and leaves the rest to the database;
 * it resumes once there is a quarter more than that free. Without the reserve, a log freed to
 * write after a full disk took the space back at once (every refusal and resend is a line), and
 * the sorter's telegrams could never be stored again.
 */
export class TrafficLogWriter {
  private stream: fs.WriteStream;
  private size: number;
  private failedAt = 0;
  private dropped = 0;
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly minFreeBytes: number;
  private paused = false;
  private freeCheckedAt = 0;
  private checkingFree = false;
  /** Bytes gathered since the last look at the free space. */
  private sinceFreeCheck = 0;
  /** Lines not yet handed to the stream, and their length. */
  private gathered: string[] = [];
  private gatheredBytes = 0;
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly file: string,
    options: TrafficLogOptions,
    private readonly events: TrafficLogEvents = { failed: () => {}, recovered: () => {} },
  ) {
    this.maxBytes = options.maxBytes;
    this.keep = options.keep;
    this.minFreeBytes = options.minFreeBytes ?? 0;
    if (this.minFreeBytes > 0) this.onFree(freeBytes(path.dirname(file)));
    const fd = fs.openSync(file, 'a');
    this.size = fs.fstatSync(fd).size;
    this.stream = this.streamOn(fd);
  }

  /** Log one telegram (its content, between STX and ETX). */
  write(time: Date, direction: Direction, content: string): void {
    if (this.minFreeBytes > 0) this.checkFree();
    if (this.paused || (this.failedAt > 0 && !this.reopen())) {
      this.dropped += 1;
      return;
    }
    const line = `${formatTrafficLine(time, direction, content)}\n`;
    try {
      if (this.size + line.length > this.maxBytes && this.size > 0) this.rotate();
    } catch (err) {
      this.fail(err as Error);
      this.dropped += 1;
      return;
    }
    this.gathered.push(line);
    this.gatheredBytes += line.length;
    this.sinceFreeCheck += line.length;
    this.size += line.length;
    if (this.gatheredBytes >= FLUSH_BYTES) this.flush();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => this.flush(), FLUSH_MS).unref();
  }

  /** Hand the gathered lines to the stream (in one write). */
  flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.gathered.length === 0) return;
    const [only] = this.gathered;
    const text = this.gathered.length === 1 && only !== undefined ? only : this.gathered.join('');
    this.gathered = [];
    this.gatheredBytes = 0;
    // A stream that failed meanwhile is destroyed: its lines are dropped, and counted.
    if (this.stream.destroyed) this.dropped += text.split('\n').length - 1;
    else this.stream.write(text);
  }

  /** Write out what is gathered and buffered, and close the file. */
  close(): Promise<void> {
    this.flush();
    if (this.stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }

  /** Look at the free space again if it is time (in the thread pool: a slow disk does not block). */
  private checkFree(): void {
    const now = Date.now();
    if (this.checkingFree || now - this.freeCheckedAt < FREE_CHECK_MS) return;
    if (!this.paused && this.sinceFreeCheck < FREE_CHECK_BYTES) return;
    this.sinceFreeCheck = 0;
    this.checkingFree = true;
    this.freeCheckedAt = now;
    fs.statfs(path.dirname(this.file), (err, stats) => {
      this.checkingFree = false;
      if (!err) this.onFree(stats.bavail * stats.bsize);
    });
  }

  private onFree(free: number | null): void {
    if (free === null) return;
    if (!this.paused && free < this.minFreeBytes) {
      this.paused = true;
      this.events.reserve?.(true, free, 0);
    } else if (this.paused && free >= this.minFreeBytes * RESUME_FACTOR) {
      this.paused = false;
      this.events.reserve?.(false, free, this.dropped);
      this.dropped = 0;
    }
  }

  private streamOn(fd: number): fs.WriteStream {
    const stream = fs.createWriteStream(this.file, { fd });
    stream.on('error', (err) => {
      if (stream === this.stream) this.fail(err);
    });
    return stream;
  }

  private fail(err: Error): void {
    if (this.failedAt === 0) this.events.failed(err);
    this.failedAt = Date.now();
  }

  /** After a failure: open the file again once RETRY_MS have passed; true if the log writes again. */
  private reopen(): boolean {
    if (Date.now() - this.failedAt < RETRY_MS) return false;
    try {
      this.stream.destroy();
      const fd = fs.openSync(this.file, 'a');
      this.size = fs.fstatSync(fd).size;
      this.stream = this.streamOn(fd);
    } catch {
      this.failedAt = Date.now();
      return false;
    }
    // A write may still fail on the new stream (the disk still full): fail() starts over then.
    this.failedAt = 0;
    this.events.recovered(this.dropped);
    this.dropped = 0;
    return true;
  }

  private rotate(): void {
    // Lines gathered or still buffered for the old stream land in the renamed file, where they belong.
    this.flush();
    this.stream.end();
    for (let i = this.keep - 1; i >= 1; i--) {
      if (fs.existsSync(`${this.file}.${i}`)) fs.renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    fs.renameSync(this.file, `${this.file}.1`);
    fs.rmSync(`${this.file}.${this.keep + 1}`, { force: true });
    // Opened here, not lazily by the stream, so that the next rotation renames an open file.
    this.stream = this.streamOn(fs.openSync(this.file, 'a'));
    this.size = 0;
  }
}
