// A layout as the session engine speaks it (lib/link/session.ts): the byte stream cut into its
// telegrams (LayoutFramer), frames as byte strings, the
// protocol's telegram types and D/A/N flags whatever the layout writes, NAK codes mapped both ways;
// and the contract's messages in and out of a layout's data (the sorter's REQUEST, VERIFY and SCAN,
// the service's assignments and destination settings).
import path from 'node:path';
import { projectRoot } from '../process/paths';
import { type Decoded, NakReason, type Telegram, TelegramError, type TelegramType } from '../telegram/telegram';
import type { LogicalType } from '../telegram/contract';
import { loadLayout } from './load';
import { type Field, type Layout, constantOf } from './table';
import { LayoutCodec, type WireTelegram } from './codec';
import { bytesOf, readableTelegram } from './text';
import type { DestinationInfoDto, InductDto, OutboundMessage, VerifyDto } from '../../model/messages';

/** The session's refusal reasons (protocol version 1's codes) by the name a layout gives their codes. */
const REASONS = new Map<number, keyof Layout['handshake']['nakCodes']>([
  [NakReason.MALFORMED, 'Malformed'],
  [NakReason.BAD_DATA, 'BadData'],
  [NakReason.UNEXPECTED, 'Unexpected'],
  [NakReason.CANNOT_STORE, 'CannotStore'],
]);
const REASON_TEXT = {
  Malformed: 'malformed telegram',
  BadData: 'bad data',
  Unexpected: 'unexpected telegram',
  CannotStore: 'cannot store now',
} as const;

/** Numbers within this distance at or before the last accepted one are repeats (at most half the numbers). */
const REPEAT_WINDOW = 100_000;

const bytes = (s: string) => Buffer.from(s, 'latin1');
const str = (b: Buffer) => b.toString('latin1');

/** An assignment's or destination settings' telegram: its type and encoded data. */
export type OutboundTelegram = { type: TelegramType; data: string };

/** An outbound message encoded for the sorter's layout, or why the layout cannot carry it. */
export type OutboundEncoding = { telegram: OutboundTelegram; refused: null } | { telegram: null; refused: string };

/**
 * One end's view of a layout. The session keeps speaking in protocol terms (a type such as REQU,
 * the flags D, A and N, its own refusal reasons 1-4) and in byte strings (latin1, one character
 * a byte); the wire turns these into the layout's telegrams and back. A layout without a
 * sequence field sends one telegram at a time: the wire numbers what comes in itself and takes
 * an answer for the telegram it sent last.
 */
export class TelegramWire {
  readonly codec: LayoutCodec;
  /** Data telegrams are numbered 1..maxSequence. */
  readonly maxSequence: number;
  /** How far back from the last accepted number a telegram is a repeat. */
  readonly repeatWindow: number;
  /** SYNS/SYNE at every connect (else none, and the peer's numbering is taken as it comes). */
  readonly resync: boolean;
  /** LIFE telegrams, and a link silent for 3 intervals is dead. */
  readonly life: boolean;
  /** Every data telegram is answered. */
  readonly acks: boolean;
  /** An answer names the type it answers (else it is matched by its number alone). */
  readonly ackEchoesType: boolean;
  /** The layout's codes for the four refusals. */
  readonly codes: Layout['handshake']['nakCodes'];
  private lastDataOut = 0;
  private lastDataIn = 0;

  constructor(readonly layout: Layout) {
    this.codec = new LayoutCodec(layout);
    this.maxSequence = layout.sequence.last;
    this.repeatWindow = Math.min(REPEAT_WINDOW, Math.floor(this.maxSequence / 2));
    this.resync = layout.resync;
    this.life = layout.life !== null && layout.telegrams.has('LIFE');
    this.acks = layout.handshake.ack === 'each';
    const ack = layout.telegrams.get('ACK');
    this.ackEchoesType = layout.handshake.by === 'flag' || (ack?.fields.some((f) => f.maps === 'AckType') ?? false);
    this.codes = layout.handshake.nakCodes;
  }

  /** The session's timing and window, with what the layout prescribes in their place. */
  settings(base: { heartbeatMs: number; ackTimeoutMs: number; window: number }): {
    heartbeatMs: number;
    ackTimeoutMs: number;
    window: number;
    wire: TelegramWire;
  } {
    const { life, handshake } = this.layout;
    return {
      heartbeatMs: life?.intervalMs ?? base.heartbeatMs,
      ackTimeoutMs: handshake.resendMs ?? base.ackTimeoutMs,
      window: Math.min(base.window, handshake.window ?? base.window, this.layout.roles.Sequence ? base.window : 1),
      wire: this,
    };
  }

  /** A stream decoder for one connection. */
  decoder(): { push(chunk: Buffer | string): Decoded[] } {
    const framer = new LayoutFramer(this.layout);
    return {
      push: (chunk) =>
        framer
          .push(chunk)
          .map((d) =>
            d.kind === 'telegram'
              ? { kind: d.kind, content: str(d.content), raw: d.content }
              : { kind: d.kind, bytes: str(d.bytes), reason: d.reason },
          ),
    };
  }

  /** The sequence number after `seq`: 1..maxSequence, wrapping to 1. */
  nextSequence(seq: number): number {
    return this.codec.nextSequence(seq);
  }

  /** The layout's code for one of the session's refusal reasons (others are the port's own codes). */
  nakCode(reason: number): number {
    const name = REASONS.get(reason);
    return name ? this.codes[name] : reason;
  }

  /** A whole frame for the socket, as a byte string. */
  encodeFrame(t: Telegram & { code?: number }): string {
    const { handshake, telegrams } = this.layout;
    let type: LogicalType = telegrams.has(t.type) ? t.type : 'REQU';
    let data: Buffer = bytes(t.data);
    if (handshake.by === 'type' && t.flag !== 'D') {
      const answered = telegrams.has(t.type) ? t.type : null;
      if (t.flag === 'A') data = this.codec.encodeData((type = 'ACK'), { AckType: answered });
      else data = this.codec.encodeData((type = 'NAK'), { AckType: answered, Code: t.code ?? 0, Text: t.data });
    }
    if (t.flag === 'D' && t.seq > 0) this.lastDataOut = t.seq;
    const wire: WireTelegram = {
      sender: t.sender,
      receiver: t.receiver,
      seq: t.seq,
      type,
      flag: t.flag,
      code: t.flag === 'N' ? (t.code ?? null) : null,
      data,
    };
    return str(this.codec.encodeFrame(wire));
  }

  /** The telegram in a frame this end wrote, as the traffic log and the dashboard show it. */
  contentOf(frame: string): string {
    const { start, end } = this.layout.framing;
    return this.readable(frame.slice(start.length, frame.length - end.length));
  }

  /** A telegram's content as the traffic log writes it: as it is, or a binary layout's readably. */
  readable(content: string, raw?: Buffer): string {
    if (!this.layout.binary) return content;
    const buf = raw ?? bytes(content);
    return readableTelegram(this.layout, buf, (b) => this.fieldsOf(b));
  }

  /** The content of a telegram as the traffic log wrote it. */
  fromReadable(logged: string): string {
    return this.layout.binary ? str(bytesOf(logged)) : logged;
  }

  /** The header of a telegram's content, in protocol terms; throws TelegramError on any problem. */
  parseContent(content: string, raw?: Buffer): Telegram & { code?: number } {
    const w = this.codec.parseContent(raw ?? bytes(content));
    let type = w.type as TelegramType;
    if (w.type === 'ACK' || w.type === 'NAK') {
      const answered = this.codec.decodeData(w.type, w.data).AckType as LogicalType | null | undefined;
      type = (answered ?? 'LIFE') as TelegramType;
    }
    let seq = w.seq;
    if (!this.layout.roles.Sequence) {
      if (w.flag !== 'D') seq = this.lastDataOut;
      else if (['REQU', 'VERI', 'SCAN', 'ASGN', 'DSET'].includes(type)) seq = this.lastDataIn = this.nextSequence(this.lastDataIn);
    }
    return {
      sender: w.sender,
      receiver: w.receiver,
      seq,
      type,
      flag: w.flag,
      data: str(w.data),
      dataBytes: w.data,
      ...(w.code !== null && { code: w.code }),
    };
  }

  /** The sequence number of a telegram, even when the rest does not parse (0 if it is unreadable). */
  sequenceOf(content: string): number {
    return this.codec.sequenceOf(bytes(content));
  }

  /** A type's data from its values, as a byte string; throws TelegramError if a value does not fit. */
  encodeData(type: TelegramType, values: object): string {
    return str(this.codec.encodeData(type, values));
  }

  /** A type's values from its data; throws TelegramError naming the first bad field. */
  decodeData(type: TelegramType, data: string): Record<string, unknown> {
    return this.codec.decodeData(type, bytes(data));
  }

  /** What an acknowledgement of `t` carries: nothing, or (echoing the telegram) its data. */
  ackData(t: Telegram): string {
    return this.layout.handshake.echo === 'telegram' ? t.data : '';
  }

  /**
   * What a refusal (a layout code) carries: the layout's NAK data, the refused telegram's data
   * (echoing the telegram), or nothing; with NAK telegrams of its own, the text they carry.
   */
  nakData(code: number, text: string, answered?: Telegram): string {
    const { handshake, telegrams } = this.layout;
    if (handshake.by === 'type') return text;
    if (telegrams.has('NAK')) return str(this.codec.encodeData('NAK', { Code: code, Text: text }));
    return handshake.echo === 'telegram' ? (answered?.data ?? '') : '';
  }

  /** Code (the layout's) and text of a refusal received; the text names the reason when the layout carries none. */
  parseNak(t: Telegram & { code?: number }): { code: number; text: string } {
    const { code, text } = this.codec.parseNak({
      sender: t.sender,
      receiver: t.receiver,
      seq: t.seq,
      type: this.layout.handshake.by === 'type' ? 'NAK' : t.type,
      flag: 'N',
      code: t.code ?? null,
      data: bytes(t.data),
    });
    const reason = (Object.keys(this.codes) as Array<keyof typeof REASON_TEXT>).find((k) => this.codes[k] === code);
    return { code, text: text || (reason ? REASON_TEXT[reason] : '') };
  }

  /** The queue message a REQU, VERI or SCAN carries; throws TelegramError naming the first bad field. */
  sorterMessageOf(t: Telegram): SorterDto {
    return sorterMessageOf(this.codec, t.type, t.dataBytes ?? bytes(t.data));
  }

  /** Type and data of the telegram that carries a sorter message (the emulator's side). */
  sorterMessageData(m: SorterDto): { type: TelegramType; data: string } {
    const { type, data } = sorterMessageData(this.codec, m);
    return { type: type as TelegramType, data: str(data) };
  }

  /** Type and data of an assignment or destination settings telegram; throws TelegramError if the layout cannot carry it. */
  outboundData(m: OutboundMessage): OutboundTelegram {
    const { type, data } = outboundData(this.codec, m);
    return { type: type as TelegramType, data: str(data) };
  }

  /**
   * An assignment or destination settings as this layout carries them, or why it cannot, naming
   * the message's field and the layout's (`"Destination" does not fit ...`): encoded once, and the
   * telegram kept for sending.
   */
  encodeOutbound(m: OutboundMessage): OutboundEncoding {
    try {
      return { telegram: this.outboundData(m), refused: null };
    } catch (err) {
      if (!(err instanceof TelegramError)) throw err;
      const type: LogicalType = m.kind === 'ASSIGNMENT' ? 'ASGN' : 'DSET';
      const field = this.layout.telegrams.get(type)?.fields.find((f) => f.name === err.field);
      const what = field?.maps
        ? `"${field.maps}" does not fit`
        : `${m.kind === 'ASSIGNMENT' ? 'an assignment' : 'destination settings'} do not fit`;
      return {
        telegram: null,
        refused: `${what} the sorter's telegram layout ${this.layout.name}: its ${err.field} takes ${err.expected}, got ${JSON.stringify(err.value)}`,
      };
    }
  }

  /**
   * Send one telegram of each kind round on a copy of this wire (this wire's numbering untouched):
   * the sorter's REQUEST, VERIFY and SCAN and our assignment, each encoded, framed, decoded, read
   * as the traffic log writes it and answered, `rounds` times. Before the link connects, so that
   * V8 has compiled the codec when the first telegram comes (on a slow CPU that first compile is
   * milliseconds a first decision would otherwise wait). A kind this layout cannot carry is
   * skipped. Says how many telegrams went round.
   */
  rehearse(names: { name: string; peerName: string }, rounds: number): number {
    const w = new TelegramWire(this.layout);
    const sent: Array<() => { type: TelegramType; data: string }> = [
      () => w.sorterMessageData(REHEARSED.request),
      () => w.sorterMessageData(REHEARSED.verify),
      () => w.sorterMessageData(REHEARSED.scan),
      () => w.outboundData(REHEARSED.assignment),
    ];
    let went = 0;
    for (let round = 0; round < rounds; round++) {
      for (const [i, telegram] of sent.entries()) {
        try {
          const { type, data } = telegram();
          const [sender, receiver] = i < 3 ? [names.peerName, names.name] : [names.name, names.peerName];
          const seq = w.nextSequence(round % w.maxSequence);
          const decoder = w.decoder();
          for (const d of decoder.push(w.encodeFrame({ sender, receiver, seq, type, flag: 'D', data }))) {
            if (d.kind !== 'telegram') continue;
            const t = w.parseContent(d.content, d.raw);
            w.readable(d.content, d.raw);
            if (i < 3) w.sorterMessageOf(t);
            const ack = w.encodeFrame({ ...t, sender: receiver, receiver: sender, flag: 'A', data: w.ackData(t) });
            for (const a of decoder.push(ack)) if (a.kind === 'telegram') w.parseContent(a.content, a.raw);
            went += 1;
          }
        } catch {
          // A kind this layout does not carry (or not with these values): nothing to compile for it.
        }
      }
    }
    return went;
  }

  /** The fields of the type a content's header names (for writing it readably), if it reads. */
  private fieldsOf(content: Buffer): Field[] | null {
    try {
      const w = this.codec.parseContent(content);
      const { by, echo } = this.layout.handshake;
      if (w.flag === 'D' || by === 'type' || echo === 'telegram') return this.layout.telegrams.get(w.type)?.fields ?? null;
      return w.flag === 'N' ? (this.layout.telegrams.get('NAK')?.fields ?? null) : null;
    } catch {
      return null;
    }
  }
}

/** The wire of a layout. */
export const layoutWire = (layout: Layout) => new TelegramWire(layout);

/** The shipped layouts' folder. */
export const LAYOUTS_DIR = path.join(projectRoot, 'layouts');

let v1: Layout | undefined;
/** A wire of protocol version 1 (layouts/v1.json), the default layout: each call its own wire, the file read once. */
export function defaultWire(): TelegramWire {
  v1 ??= loadLayout(path.join(LAYOUTS_DIR, 'v1.json'));
  return new TelegramWire(v1);
}

// The contract's messages in and out of a layout's data.

/** A message from the sorter. */
export type SorterDto = InductDto | VerifyDto | DestinationInfoDto;

/** The queue message carried by a REQU, VERI or SCAN telegram's data; throws TelegramError naming the first bad field. */
export function sorterMessageOf(codec: LayoutCodec, type: LogicalType, data: Buffer): SorterDto {
  if (type !== 'REQU' && type !== 'VERI' && type !== 'SCAN') throw new TelegramError('Type', type, 'REQU, VERI or SCAN');
  const f = codec.decodeData(type, data);
  switch (type) {
    case 'REQU':
      return {
        Type: 'REQUEST',
        TrackID: f.TrackID,
        Barcode: f.Barcode,
        MessageCode: f.MessageCode,
        InductLocation: f.InductLocation,
        RecirculationCount: f.RecirculationCount,
        Length: f.Length,
        Width: f.Width,
        Height: f.Height,
        Weight: f.Weight,
      } as InductDto;
    case 'VERI':
      return {
        Type: 'VERIFY',
        TrackID: f.TrackID,
        Barcode: f.Barcode,
        Destination: f.Destination,
        MessageCode: f.MessageCode,
      } as VerifyDto;
    case 'SCAN':
      return {
        Type: 'SCAN',
        Destination: f.Destination,
        DestinationStatus: f.DestinationStatus,
        DestinationText: f.DestinationText,
        LightStatus: f.LightStatus,
        LightColor: f.LightColor,
        ButtonID: f.ButtonID,
        MessageCode: f.MessageCode,
        BatchDoorStatus: f.BatchDoorStatus,
      } as DestinationInfoDto;
  }
}

/** Type and data of the telegram that carries a sorter message (the emulator's and the tests' side). */
export function sorterMessageData(codec: LayoutCodec, m: SorterDto): { type: LogicalType; data: Buffer } {
  const type: LogicalType = m.Type === 'REQUEST' ? 'REQU' : m.Type === 'VERIFY' ? 'VERI' : 'SCAN';
  return { type, data: codec.encodeData(type, m) };
}

/** Type and data of an assignment (ASGN) or destination settings (DSET) telegram; throws TelegramError if a value does not fit. */
export function outboundData(codec: LayoutCodec, m: OutboundMessage): { type: LogicalType; data: Buffer } {
  const type: LogicalType = m.kind === 'ASSIGNMENT' ? 'ASGN' : 'DSET';
  return { type, data: codec.encodeData(type, m.body) };
}

// Cuts a byte stream into the telegrams of a layout, whatever the reads split or pack: by start
// and end characters, by a fixed telegram length, or by the header's length field.
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
  /**
   * Fixed-length blocks: where the next block starts if the block found misaligned was a whole
   * block with a wrong length field (bytes from the buffer's start; null: no such block skipped).
   */
  private boundary: number | null = null;
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
    if (this.boundary !== null) this.boundary = this.boundary - n > 0 ? this.boundary - n : null;
    return { kind: 'garbage', bytes: Buffer.from(bytes), reason };
  }

  private take(from: number, to: number, after: number): Framed {
    this.resyncing = false;
    this.boundary = null;
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
      // Set only while resyncing (skipToLength sets both, take clears both).
      const boundary = this.boundary;
      if (boundary !== null && this.buffer.length >= boundary + this.layout.headerWidth && this.headerCouldStart(boundary))
        return this.skip(boundary, `a block whose length field did not say ${this.fixed}, skipped whole: the next one starts after it`);
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
    // A whole block whose length field is wrong (a PLC program that wrote it wrong) leaves the next
    // block where it would be: a header found there is taken before one found inside this block's
    // data (numbers in a block's data can read as a header).
    if (!this.resyncing && this.fixed !== null) this.boundary = this.fixed;
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

/** What `rehearse` sends round: short values that fit the shipped layouts' fields. */
const REHEARSED = {
  request: {
    Type: 'REQUEST',
    TrackID: '1',
    Barcode: 'A1',
    MessageCode: 0,
    InductLocation: '1',
    RecirculationCount: 0,
    Length: 1,
    Width: 1,
    Height: 1,
    Weight: 1,
  },
  verify: { Type: 'VERIFY', TrackID: '1', Barcode: 'A1', Destination: '1', MessageCode: 0 },
  scan: {
    Type: 'SCAN',
    Destination: '1',
    DestinationStatus: 'Ready',
    DestinationText: 'A',
    LightStatus: 'Off',
    LightColor: 'GREEN',
    ButtonID: 0,
    MessageCode: 0,
    BatchDoorStatus: null,
  },
  assignment: { kind: 'ASSIGNMENT', body: { TrackID: '1', Destination: '1', Barcode: 'A1' } },
} as const satisfies { request: SorterDto; verify: SorterDto; scan: SorterDto; assignment: OutboundMessage };
