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
 * rotated file, up to `keep` of them. Writes are synchronous appends (one write call a line),
 * so a crash loses no line that was written.
 */
export class TrafficLogWriter {
  private fd: number;
  private size: number;

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
    private readonly keep: number,
  ) {
    this.fd = fs.openSync(file, 'a');
    this.size = fs.fstatSync(this.fd).size;
  }

  /** Log one telegram (its content, between STX and ETX). */
  write(time: Date, direction: Direction, content: string): void {
    const line = `${formatTrafficLine(time, direction, content)}\n`;
    if (this.size + line.length > this.maxBytes && this.size > 0) this.rotate();
    fs.writeSync(this.fd, line);
    this.size += line.length;
  }

  /** Close the file. */
  close(): void {
    fs.closeSync(this.fd);
  }

  private rotate(): void {
    fs.closeSync(this.fd);
    for (let i = this.keep - 1; i >= 1; i--) {
      if (fs.existsSync(`${this.file}.${i}`)) fs.renameSync(`${this.file}.${i}`, `${this.file}.${i + 1}`);
    }
    fs.renameSync(this.file, `${this.file}.1`);
    fs.rmSync(`${this.file}.${this.keep + 1}`, { force: true });
    this.fd = fs.openSync(this.file, 'a');
    this.size = 0;
  }
}
