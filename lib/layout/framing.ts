// Cuts a byte stream into the telegrams of a layout, whatever the reads split or pack: by start
// and end characters, by a fixed telegram length, or by the header's length field.
import { type Field, type Layout, constantOf } from './table';

/** What the framer found in the stream: a telegram's content (between the framing characters), or bytes it skipped. */
export type Framed = { kind: 'telegram'; content: Buffer } | { kind: 'garbage'; bytes: Buffer; reason: string };

const NAMES: Record<string, string> = { '\x02': 'STX', '\x03': 'ETX', '\x04': 'EOT', '\r': 'CR', '\n': 'LF', '\x00': 'NUL' };
const nameOf = (b: Buffer) => [...b.toString('latin1')].map((c) => NAMES[c] ?? JSON.stringify(c)).join(' ');

/**
 * The stream decoder of one layout. Bytes outside a telegram and telegrams cut short are reported
 * as garbage and skipped; decoding resumes at the next start character (or, without one, after
 * the next end character). Without any framing character a length that cannot be read leaves no
 * way to find the next telegram: what is buffered is skipped. The content is not judged here.
 */
export class LayoutFramer {
  private buffer = Buffer.alloc(0);
  /** Fixed-length blocks: bytes were skipped to find where a block starts; the next one must look like a header. */
  private resyncing = false;
  private readonly start: Buffer;
  private readonly end: Buffer;
  private readonly fixed: number | null;
  private readonly length: Field | undefined;
  private readonly max: number;

  constructor(private readonly layout: Layout) {
    ({ start: this.start, end: this.end, telegramLength: this.fixed, maxLength: this.max } = layout.framing);
    this.length = layout.roles.Length;
  }

  /** Feed one read; returns what it completed, in stream order. */
  push(chunk: Buffer | string): Framed[] {
    this.buffer =
      this.buffer.length === 0
        ? Buffer.from(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk)
        : Buffer.concat([this.buffer, typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk]);
    const out: Framed[] = [];
    for (;;) {
      const item = this.start.length > 0 ? this.nextStarted() : this.nextUnstarted();
      if (!item) return out;
      out.push(item);
    }
  }

  private skip(n: number, reason: string): Framed {
    const bytes = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return { kind: 'garbage', bytes: Buffer.from(bytes), reason };
  }

  private take(from: number, to: number, after: number): Framed {
    this.resyncing = false;
    const content = Buffer.from(this.buffer.subarray(from, to));
    this.buffer = this.buffer.subarray(after);
    return { kind: 'telegram', content };
  }

  /** A telegram starting with the start character. */
  private nextStarted(): Framed | null {
    const { start, end } = this;
    if (this.buffer.length === 0) return null;
    const at = this.buffer.indexOf(start);
    if (at < 0) {
      // Keep a tail that may be the beginning of a start sequence split by the read.
      const keep = Math.min(start.length - 1, this.buffer.length);
      return this.buffer.length > keep ? this.skip(this.buffer.length - keep, 'bytes outside a telegram') : null;
    }
    if (at > 0) return this.skip(at, 'bytes outside a telegram');
    const from = start.length;
    const length = this.lengthFrom(from);
    if (length === 'wait') return this.cutShortByStart(from);
    if (length === 'misaligned')
      return this.skip(start.length, `the length field does not say ${this.fixed}: skipped up to the next ${nameOf(start)}`);
    if (length === 'unreadable') return this.skip(start.length, `unreadable length field: skipped up to the next ${nameOf(start)}`);
    if (length !== null) {
      if (this.buffer.length < from + length + end.length) return this.cutShortByStart(from);
      if (!this.buffer.subarray(from + length, from + length + end.length).equals(end))
        return this.skip(start.length, `no ${nameOf(end)} after ${length} bytes: skipped up to the next ${nameOf(start)}`);
      return this.take(from, from + length, from + length + end.length);
    }
    const stop = this.buffer.indexOf(end, from);
    const restart = this.buffer.indexOf(start, from);
    if (restart >= 0 && (stop < 0 || restart < stop)) return this.skip(restart, `telegram cut short by a new ${nameOf(start)}`);
    if (stop < 0) {
      if (this.buffer.length - from > this.max) return this.skip(this.buffer.length, `no ${nameOf(end)} within ${this.max} characters`);
      return null;
    }
    return this.take(from, stop, stop + end.length);
  }

  /** Incomplete so far; a new start character inside means this one was cut short. */
  private cutShortByStart(from: number): Framed | null {
    const restart = this.buffer.indexOf(this.start, from);
    return restart >= 0 && this.fixed === null ? this.skip(restart, `telegram cut short by a new ${nameOf(this.start)}`) : null;
  }

  /** A telegram without a start character: cut by length, then the end character checked; or cut at the end character. */
  private nextUnstarted(): Framed | null {
    const { end } = this;
    if (this.buffer.length === 0) return null;
    const length = this.lengthFrom(0);
    if (length === 'wait') return null;
    if (length === 'unreadable') {
      if (end.length === 0)
        return this.skip(
          this.buffer.length,
          'unreadable length field: no framing character to resynchronise on, the buffered bytes are skipped',
        );
      return this.skipPastEnd('unreadable length field');
    }
    if (length === 'misaligned') return this.skipToLength();
    if (length !== null) {
      // Found after skipping: judged as a header once its bytes are in, not by its length field alone.
      if (this.resyncing && this.fixed !== null) {
        if (this.buffer.length < this.layout.headerWidth) return null;
        if (!this.headerCouldStart(0)) return this.skipToLength();
      }
      if (this.buffer.length < length + end.length) return null;
      if (end.length > 0 && !this.buffer.subarray(length, length + end.length).equals(end)) return this.resyncOnEnd(length);
      return this.take(0, length, length + end.length);
    }
    const stop = this.buffer.indexOf(end);
    if (stop < 0) {
      if (this.buffer.length > this.max) return this.skip(this.buffer.length, `no ${nameOf(end)} within ${this.max} characters`);
      return null;
    }
    return this.take(0, stop, stop + end.length);
  }

  /**
   * No end character after a fixed-length telegram: bytes came before it (garbage, or a telegram
   * cut short). The next end character found ends the next telegram, so what lies more than a
   * telegram's length before it is skipped; an end character nearer than that ends only garbage.
   */
  private resyncOnEnd(length: number): Framed | null {
    const stop = this.buffer.indexOf(this.end);
    if (stop < 0)
      return this.buffer.length > length + this.max
        ? this.skip(this.buffer.length - length, `no ${nameOf(this.end)} after ${length} bytes`)
        : null;
    if (stop >= length)
      return this.skip(
        stop - length,
        `no ${nameOf(this.end)} after ${length} bytes: skipped up to the telegram before the next ${nameOf(this.end)}`,
      );
    return this.skip(stop + this.end.length, `no ${nameOf(this.end)} after ${length} bytes: skipped up to the next ${nameOf(this.end)}`);
  }

  /**
   * A fixed-length block whose length field is wrong is not where a block starts: skip to where
   * a header could start: the length field reads right, the type field holds a known code, the
   * sequence number is one the peer may send, and the fixed fields hold their constants (a length
   * alone is two bytes that data may hold too; garbage that ends in a length next to the real
   * header's first bytes would otherwise take the real telegram's place, and lose it).
   */
  private skipToLength(): Framed | null {
    this.resyncing = true;
    const need = this.layout.headerWidth;
    let at = 1;
    while (at + need <= this.buffer.length && !this.headerCouldStart(at)) at++;
    // `at` is where a block starts, or the first place whose bytes are not all in yet: kept.
    return this.skip(at, `no telegram starts here (its length field does not say ${this.fixed}): skipped up to one that does`);
  }

  private headerCouldStart(at: number): boolean {
    if (this.lengthFrom(at) !== this.fixed) return false;
    const { Type: type, Sequence: seq } = this.layout.roles;
    if (type && !this.knownType(type, at)) return false;
    if (seq?.kind === 'bin' && this.buffer.readUIntBE(at + seq.offset, seq.width) > this.layout.sequence.last) return false;
    return this.layout.header.every(
      (f) => f.kind !== 'fixed' || this.buffer.subarray(at + f.offset, at + f.offset + f.width).equals(constantOf(f)),
    );
  }

  private knownType(f: Field, from: number): boolean {
    const raw = this.buffer.subarray(from + f.offset, from + f.offset + f.width);
    if (f.kind === 'bin') return this.layout.byCode.has(String(raw.readUIntBE(0, f.width)));
    if (f.kind === 'int') return this.layout.byCode.has(String(Number(raw.toString('latin1'))));
    let end = raw.length;
    while (end > 0 && raw[end - 1] === f.fill) end--;
    return this.layout.byCode.has(raw.subarray(0, end).toString('latin1'));
  }

  /** Skip up to and including the next end character (the next telegram starts after it). */
  private skipPastEnd(why: string): Framed | null {
    const stop = this.buffer.indexOf(this.end, 1);
    if (stop < 0)
      return this.buffer.length > this.max
        ? this.skip(this.buffer.length, `${why}: no ${nameOf(this.end)} within ${this.max} bytes`)
        : null;
    return this.skip(stop + this.end.length, `${why}: skipped up to the next ${nameOf(this.end)}`);
  }

  /**
   * The telegram length at `from`, if the layout says it other than by the end character: the
   * fixed length, or the length field's value once its bytes are in ('unreadable' if it is not a
   * length), 'wait' until its bytes are in. null: cut at the end character.
   */
  private lengthFrom(from: number): number | 'unreadable' | 'misaligned' | 'wait' | null {
    const f = this.length;
    if (this.fixed !== null) {
      // A fixed length and a length field: a block whose field says otherwise is not aligned.
      if (!f || this.buffer.length < from + f.offset + f.width) return this.fixed;
      const said = this.said(f, from);
      return said === (f.counts === 'telegram' ? this.fixed : this.fixed - f.offset - f.width) ? this.fixed : 'misaligned';
    }
    // With both framing characters the end character cuts (a wrong length is the header's problem).
    if (!f || (this.start.length > 0 && this.end.length > 0)) return null;
    if (this.buffer.length < from + f.offset + f.width) return 'wait';
    const n = this.said(f, from);
    if (n === null) return 'unreadable';
    const total = f.counts === 'telegram' ? n : n + f.offset + f.width;
    if (total < this.layout.headerWidth || total > this.max) return 'unreadable';
    return total;
  }

  /** The length field's value at a telegram starting at `from` (null: not a number). */
  private said(f: Field, from: number): number | null {
    const raw = this.buffer.subarray(from + f.offset, from + f.offset + f.width);
    if (f.kind === 'bin') return raw.readUIntBE(0, f.width);
    const s = raw.toString('latin1');
    return /^\d+$/.test(s) ? Number(s) : null;
  }
}
