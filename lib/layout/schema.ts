// A layout file: one sorter's telegram set described as data (docs/telegram-layouts.md). Its
// JSON shape and the joi schema that checks it; check.ts resolves it, load.ts loads it.
import Joi from 'joi';
import { LogicalTypes, type Direction, type LogicalType } from '../telegram/contract';

/** How a field is written on the wire. */
const FieldKinds = ['text', 'int', 'decimal', 'enum', 'bin', 'fixed', 'spare'] as const;
export type FieldKind = (typeof FieldKinds)[number];

/** What a header field holds. */
const HeaderRoles = ['Length', 'Sender', 'Receiver', 'Sequence', 'Type', 'Handshake', 'Code'] as const;
export type HeaderRole = (typeof HeaderRoles)[number];

/** One field as a layout file gives it (header or data). */
export interface FieldDef {
  Name: string;
  Kind: FieldKind;
  /** Bytes on the wire. */
  Width: number;
  /** Position of its first byte, counted from 0 at the telegram's first byte after the start character. */
  Offset?: number;
  /** Header fields: what the field holds (a header field without a role is written like a data field). */
  Role?: HeaderRole;
  /** Data fields: the contract field it carries. */
  Maps?: string;
  Align?: 'left' | 'right';
  /** Overrides the layout's fill character (int and decimal: '0'). */
  Fill?: string;
  /** Blank is refused (text, enum). */
  Required?: boolean;
  /** decimal and bin: the value on the wire is the number times 10^Scale. */
  Scale?: number;
  /** enum and bin: wire value to contract value (null: blank or absent). */
  Map?: Record<string, string | null>;
  /** fixed: the constant, as text or as hex. */
  Value?: string;
  Hex?: string;
  /** Length role: what the length counts. */
  Counts?: 'telegram' | 'rest';
  Description?: string;
}

/** One telegram type as a layout file gives it. */
export interface TelegramDef {
  Type: LogicalType;
  /** The value of the header's Type field for this telegram (a NAK answered by flag has none). */
  Code?: string | number;
  Direction: Direction;
  /** The DTO it carries (checked against Type). */
  Contract?: string;
  Fields: FieldDef[];
  /** Contract fields the wire does not carry, with the value they take. */
  Constants?: Record<string, string | number | null>;
  Description?: string;
}

/** A layout file. */
export interface LayoutFile {
  Name: string;
  Description?: string;
  Charset: 'ascii' | 'latin1';
  Fill: string;
  Framing: {
    /** Start and end characters ("" none; STX, ETX, CR, LF and NUL by name). */
    Start: string;
    End: string;
    /** Every telegram has this many bytes (between start and end characters), padded with the fill. */
    TelegramLength: number | null;
    /** The longest telegram a receiver accepts (null: what the length field can say, or the longest type). */
    MaxLength: number | null;
  };
  Header: FieldDef[];
  Sequence: { Last: number; Control: number };
  Handshake: {
    Ack: 'each' | 'none';
    By: 'flag' | 'type';
    Flags?: { Data: string | number; Ack: string | number; Nak: string | number };
    Echo: 'header' | 'telegram';
    NakCodes: { Malformed: number; BadData: number; Unexpected: number; CannotStore: number };
    ResendMs: number | null;
    Window: number | null;
  };
  Life: { IntervalMs: number | null } | null;
  Resync: 'SYNS' | 'none';
  Telegrams: TelegramDef[];
}

const name = Joi.string().min(1).max(40);
/** A fill character: one character, or NUL by name. */
const oneChar = Joi.alternatives(Joi.string().min(1).max(1), Joi.string().valid('NUL'));
const wireValue = Joi.alternatives(Joi.string().min(1), Joi.number().integer().min(0));

const field = Joi.object<FieldDef>({
  Name: name.required(),
  Kind: Joi.string()
    .valid(...FieldKinds)
    .required(),
  Width: Joi.number().integer().min(1).max(4096).required(),
  Offset: Joi.number().integer().min(0),
  Role: Joi.string().valid(...HeaderRoles),
  Maps: Joi.string(),
  Align: Joi.string().valid('left', 'right'),
  Fill: oneChar,
  Required: Joi.boolean(),
  Scale: Joi.number().integer().min(0).max(9),
  Map: Joi.object().pattern(Joi.string().min(1), Joi.string().allow(null)).min(1),
  Value: Joi.string().min(1),
  Hex: Joi.string().pattern(/^([0-9a-fA-F]{2})+$/),
  Counts: Joi.string().valid('telegram', 'rest'),
  Description: Joi.string().allow(''),
});

/** The shape of a layout file; what the shape cannot say is checked by resolveLayout. */
export const layoutSchema = Joi.object<LayoutFile>({
  Name: name.required(),
  Description: Joi.string().allow(''),
  Charset: Joi.string().valid('ascii', 'latin1').default('ascii'),
  Fill: oneChar.default(' '),
  Framing: Joi.object({
    Start: Joi.string().allow('').max(4).default(''),
    End: Joi.string().allow('').max(4).default(''),
    TelegramLength: Joi.number().integer().min(1).max(65535).allow(null).default(null),
    MaxLength: Joi.number().integer().min(1).max(65535).allow(null).default(null),
  }).required(),
  Header: Joi.array()
    .items(field.keys({ Maps: Joi.forbidden() }))
    .required(),
  Sequence: Joi.object({
    Last: Joi.number()
      .integer()
      .min(9)
      .max(2 ** 31 - 1)
      .required(),
    Control: Joi.number().integer().min(0).default(0),
  }).required(),
  Handshake: Joi.object({
    Ack: Joi.string().valid('each', 'none').default('each'),
    By: Joi.string().valid('flag', 'type').required(),
    Flags: Joi.object({ Data: wireValue.required(), Ack: wireValue.required(), Nak: wireValue.required() }),
    Echo: Joi.string().valid('header', 'telegram').default('header'),
    NakCodes: Joi.object({
      Malformed: Joi.number().integer().min(0).required(),
      BadData: Joi.number().integer().min(0).required(),
      Unexpected: Joi.number().integer().min(0).required(),
      CannotStore: Joi.number().integer().min(0).required(),
    }).required(),
    ResendMs: Joi.number().integer().min(50).max(60000).allow(null).default(null),
    Window: Joi.number().integer().min(1).max(1000).allow(null).default(null),
  }).required(),
  Life: Joi.object({ IntervalMs: Joi.number().integer().min(100).max(60000).allow(null).default(null) })
    .allow(null)
    .required(),
  Resync: Joi.string().valid('SYNS', 'none').required(),
  Telegrams: Joi.array()
    .items(
      Joi.object<TelegramDef>({
        Type: Joi.string().required(),
        Code: wireValue,
        Direction: Joi.string().valid('FromSorter', 'ToSorter', 'Both').required(),
        Contract: Joi.string(),
        Fields: Joi.array()
          .items(field.keys({ Role: Joi.forbidden() }))
          .required(),
        Constants: Joi.object().pattern(Joi.string(), Joi.alternatives(Joi.string().allow(''), Joi.number(), null)),
        Description: Joi.string().allow(''),
      }),
    )
    .min(1)
    .required(),
}).prefs({ abortEarly: false, convert: false });

/** Is this one of the protocol's telegram types? */
export const isLogicalType = (t: string): t is LogicalType => LogicalTypes.some((x) => x === t);
