// Service_PLC.log: one line per telegram in and out, rotated by size; and its parser.
import fs from 'node:fs';

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
  const m = LINE.exec(line.replace(/\r$/, ''));
  if (!m) return undefined;
  return { time: m[1], direction: m[2] as Direction, content: m[3] };
}

/**
 * Appends traffic lines to Service_PLC.log, rotating by size: Service_PLC.log.1 is the newest
 * rotated file, up to `keep` of them. Lines are written in order through a stream (libuv's thread
 * pool), so a slow disk never blocks the event loop; a crash may lose the last lines still in
 * memory (the database, not this log, is the record of what was committed).
 */
export class TrafficLogWriter {
  private stream: fs.WriteStream;
  private size: number;

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
    private readonly keep: number,
  ) {
    const fd = fs.openSync(file, 'a');
    this.size = fs.fstatSync(fd).size;
    this.stream = fs.createWriteStream(file, { fd });
  }

  /** Log one telegram (its content, between STX and ETX). */
  write(time: Date, direction: Direction, content: string): void {
    const line = `${formatTrafficLine(time, direction, content)}\n`;
    if (this.size + line.length > this.maxBytes && this.size > 0) this.rotate();
    this.stream.write(line);
    this.size += line.length;
  }

  /** Write out what is buffered and close the file. */
  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }


  private rotate(): void {
    // Lines still buffered for the old stream land in the renamed file, where they belong.
    this.stream.end();
    for (let i = this.keep - 1; i >= 1; i--) {
      if (fs.existsSync(`${this.file}.${i}`)) fs.renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    fs.renameSync(this.file, `${this.file}.1`);
    fs.rmSync(`${this.file}.${this.keep + 1}`, { force: true });
    // Opened here, not lazily by the stream, so that the next rotation renames an open file.
    this.stream = fs.createWriteStream(this.file, { fd: fs.openSync(this.file, 'a') });
    this.size = 0;
  }
}
