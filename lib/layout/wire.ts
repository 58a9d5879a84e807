// A layout as the session engine speaks it (lib/link/session.ts): frames as byte strings, the
// protocol's telegram types and D/A/N flags whatever the layout writes, NAK codes mapped both ways;
// and the contract's messages in and out of a layout's data (the sorter's REQUEST, VERIFY and SCAN,
// the service's assignments and destination settings).
import path from 'node:path';
import { projectRoot } from '../process/paths';
import type { Decoded } from '../telegram/telegram';
import { NakReason, type Telegram, TelegramError, type TelegramType } from '../telegram/telegram';
import type { LogicalType } from '../telegram/contract';
import { loadLayout } from './load';
import type { Field, Layout } from './table';
import { LayoutCodec, type WireTelegram } from './codec';
import { LayoutFramer } from './framing';
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
