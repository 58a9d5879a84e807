// Cuts the sorter link's byte stream into STX...ETX frames and reports what it skips.
import { type Decoded, ETX, STX } from '../lib/telegram/telegram';
export type { Decoded };

/** Longest content between STX and ETX: the 4-digit length field cannot say more. */
export const MAX_CONTENT = 9999;

/**
 * Cuts a TCP byte stream into STX...ETX frames, whatever the reads split or pack. Bytes
 * outside a frame, a frame cut short by a new STX, and a frame longer than MAX_CONTENT are
 * reported as garbage and skipped; decoding resumes at the next STX. The content of a frame is
 * not judged here (the link answers a malformed one with a NAK).
 */
export class TelegramDecoder {
  private buffer = '';

  /** Feed one read; returns what it completed, in stream order. */
  push(chunk: Buffer | string): Decoded[] {
    this.buffer += typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    const out: Decoded[] = [];
    for (;;) {
      const start = this.buffer.indexOf(STX);
      if (start < 0) {
        if (this.buffer.length > 0) out.push({ kind: 'garbage', bytes: this.buffer, reason: 'bytes outside a telegram' });
        this.buffer = '';
        return out;
      }
      if (start > 0) {
        out.push({ kind: 'garbage', bytes: this.buffer.slice(0, start), reason: 'bytes outside a telegram' });
        this.buffer = this.buffer.slice(start);
      }
      const end = this.buffer.indexOf(ETX, 1);
      const restart = this.buffer.indexOf(STX, 1);
      if (restart >= 0 && (end < 0 || restart < end)) {
        out.push({ kind: 'garbage', bytes: this.buffer.slice(0, restart), reason: 'telegram cut short by a new STX' });
        this.buffer = this.buffer.slice(restart);
        continue;
      }
      if (end < 0) {
        if (this.buffer.length - 1 > MAX_CONTENT) {
          out.push({ kind: 'garbage', bytes: this.buffer, reason: `no ETX within ${MAX_CONTENT} characters` });
          this.buffer = '';
        }
        return out;
      }
      out.push({ kind: 'telegram', content: this.buffer.slice(1, end) });
      this.buffer = this.buffer.slice(end + 1);
    }
  }
}
