// Test mode's replay files: Service_PLC.csv and Service_PLC.log parsed into queue messages, with
// line-level errors.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parse } from 'csv-parse';
import { DestinationStatus, LightColor, LightStatus, MessageType, isExactEnum } from '../../model/enums';
import type { SorterMessage } from '../../model/messages';
import { TelegramError } from '../telegram/telegram';
import { type TelegramWire, defaultWire } from '../layout/wire';
import { parseTrafficLine } from '../link/traffic-log';

/** The exact header of Service_PLC.csv, in order (spec section 1, "Test mode"). */
export const CSV_COLUMNS = [
  'Type',
  'MessageCode',
  'DeviceID',
  'TrackID',
  'Barcode',
  'Length',
  'Width',
  'Height',
  'Weight',
  'RecircCount',
  'DestinationStatus',
  'LightStatus',
  'LightColor',
  'DestinationText',
  'ButtonID',
] as const;

/** Replay files in the service home, in order of preference (spec's table: CSV first). */
const REPLAY_FILES = ['Service_PLC.csv', 'Service_PLC.log'] as const;

/** Why a row of a replay file was skipped. */
export interface ReplayProblem {
  line: number;
  column: string;
  value: string;
  expected: string;
}

/** One message from a replay file, or the reason its row was skipped. */
export type ReplayItem = { message: SorterMessage } | { problem: ReplayProblem };

type Column = (typeof CSV_COLUMNS)[number];
/** A CSV record's fields, read by column name through COLUMN_INDEX (no object per row). */
type Row = readonly string[];
const COLUMN_INDEX = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, i])) as Record<Column, number>;
const field = (row: Row, column: Column): string => row[COLUMN_INDEX[column]] ?? ''; // rows of another column count are skipped before

class RowError extends Error {
  constructor(
    readonly column: string,
    readonly value: string,
    readonly expected: string,
  ) {
    super(`${column}: ${expected}`);
  }
}

const INTEGER = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

/** Digits an integer may have: as many as its field in a live telegram (docs/sorter-protocol.md). */
const INTEGER_DIGITS = { MessageCode: 5, RecircCount: 3, ButtonID: 3 } as const;

function integer(row: Row, column: keyof typeof INTEGER_DIGITS, emptyIs?: number): number {
  const v = field(row, column);
  if (v === '' && emptyIs !== undefined) return emptyIs;
  if (!INTEGER.test(v)) throw new RowError(column, v, 'a whole number');
  if (v.replace(/^0+(?=\d)/, '').length > INTEGER_DIGITS[column])
    throw new RowError(column, v, `a whole number of at most ${INTEGER_DIGITS[column]} digits`);
  return Number(v);
}

/** Empty numeric columns are 0 (the DTO fields are numbers); anything else must parse. */
function decimal(row: Row, column: 'Length' | 'Width' | 'Height' | 'Weight'): number {
  const v = field(row, column);
  if (v === '') return 0;
  if (!DECIMAL.test(v)) throw new RowError(column, v, 'a decimal number such as 12.5');
  return Number(v);
}

function required(row: Row, column: 'DeviceID' | 'TrackID'): string {
  const v = field(row, column);
  if (v === '') throw new RowError(column, '', 'a value');
  return v;
}

function exact<T extends string>(row: Row, column: 'DestinationStatus' | 'LightStatus' | 'LightColor', values: readonly T[]): T {
  const v = field(row, column);
  if (!isExactEnum(values, v)) throw new RowError(column, v, `exactly one of ${values.join(', ')}`);
  return v;
}

/** Turn one CSV row into its message (docs/configuration.md, "Test mode and replay files"); throws RowError. */
function messageOfRow(row: Row): SorterMessage {
  const type = field(row, 'Type');
  if (!isExactEnum(MessageType, type)) throw new RowError('Type', type, `exactly one of ${MessageType.join(', ')}`);
  switch (type) {
    case 'REQUEST':
      return {
        Type: 'REQUEST',
        TrackID: required(row, 'TrackID'),
        Barcode: field(row, 'Barcode'),
        MessageCode: integer(row, 'MessageCode'),
        InductLocation: required(row, 'DeviceID'),
        RecirculationCount: integer(row, 'RecircCount', 0),
        Length: decimal(row, 'Length'),
        Width: decimal(row, 'Width'),
        Height: decimal(row, 'Height'),
        Weight: decimal(row, 'Weight'),
      };
    case 'VERIFY':
      return {
        Type: 'VERIFY',
        TrackID: required(row, 'TrackID'),
        Barcode: field(row, 'Barcode'),
        Destination: required(row, 'DeviceID'),
        MessageCode: integer(row, 'MessageCode'),
      };
    case 'SCAN':
      return {
        Type: 'SCAN',
        Destination: required(row, 'DeviceID'),
        DestinationStatus: exact(row, 'DestinationStatus', DestinationStatus),
        DestinationText: field(row, 'DestinationText'),
        LightStatus: exact(row, 'LightStatus', LightStatus),
        LightColor: exact(row, 'LightColor', LightColor),
        // NONE is the replay files' "no button": the field is an integer, so it is 0.
        ButtonID: field(row, 'ButtonID') === 'NONE' ? 0 : integer(row, 'ButtonID', 0),
        MessageCode: integer(row, 'MessageCode'),
        BatchDoorStatus: null,
      };
  }
}

/** Validate one CSV record (already split into fields) found on `line`. */
export function csvRecordToItem(fields: string[], line: number): ReplayItem {
  if (fields.length !== CSV_COLUMNS.length) {
    return { problem: { line, column: '(row)', value: `${fields.length} columns`, expected: `${CSV_COLUMNS.length} columns` } };
  }
  try {
    return { message: messageOfRow(fields) };
  } catch (err) {
    if (err instanceof RowError) return { problem: { line, column: err.column, value: err.value, expected: err.expected } };
    throw err;
  }
}

/** Raised when a replay file cannot be used at all (unreadable, wrong header). */
export class ReplayFileError extends Error {}

/** Line breaks inside a record's (quoted) fields: the lines it spans beyond its first. */
function lineBreaksIn(record: readonly string[]): number {
  let n = 0;
  for (const value of record) {
    for (let i = value.indexOf('\n'); i >= 0; i = value.indexOf('\n', i + 1)) n += 1;
  }
  return n;
}

/** Stream the messages of a Service_PLC.csv in file order. */
export async function* readReplayCsv(file: string): AsyncGenerator<ReplayItem> {
  // Line numbers are counted here: csv-parse's `info` option copies a context object for every
  // record, which was 12% of the time to seed a large file. So empty lines are not skipped by
  // the parser (each comes through as one empty field) but here, to keep the count exact.
  // A stray quote inside a field is taken literally (the row is then checked like any other);
  // a record the parser still cannot read (a quote never closed) is skipped and reported, and
  // the rows before it load, instead of the whole file failing.
  const parser = fs
    .createReadStream(file)
    .pipe(parse({ bom: true, relax_column_count: true, relax_quotes: true, skip_records_with_error: true }));
  const unreadable: Error[] = [];
  parser.on('skip', (err: Error) => unreadable.push(err));
  let nextLine = 1;
  let header = true;
  const unreadableRecords = function* (): Generator<ReplayItem> {
    for (const err of unreadable.splice(0))
      yield {
        problem: {
          line: nextLine,
          column: '(record)',
          value: err.message.slice(0, 80),
          expected: 'a CSV record whose quoted fields are closed',
        },
      };
  };
  for await (const record of parser as AsyncIterable<string[]>) {
    yield* unreadableRecords();
    const line = nextLine;
    nextLine += 1 + lineBreaksIn(record);
    if (record.length === 1 && record[0] === '') continue;
    if (header) {
      header = false;
      if (record.join(',') !== CSV_COLUMNS.join(',')) {
        throw new ReplayFileError(
          `${path.basename(file)} line ${line}: header must be exactly "${CSV_COLUMNS.join(',')}", found "${record.join(',')}"`,
        );
      }
      continue;
    }
    yield csvRecordToItem(record, line);
  }
  yield* unreadableRecords();
}

/**
 * Stream the sorter-to-service messages recorded in a Service_PLC.log, in file order, its
 * telegrams read in the layout they were logged in (`wire`; a binary layout's are logged readably).
 * Only IN data telegrams of type REQU, VERI and SCAN carry messages; acknowledgements,
 * heartbeats and our own OUT telegrams are not replayed. A telegram the sorter repeated
 * (same sequence number as the last one accepted) is replayed once, as the live link queues it once.
 */
export async function* readReplayLog(file: string, wire: TelegramWire = defaultWire()): AsyncGenerator<ReplayItem> {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let lineNo = 0;
  let lastSeq: number | undefined;
  for await (const line of lines) {
    lineNo += 1;
    if (line.trim() === '' || line.startsWith('#')) continue;
    const entry = parseTrafficLine(line);
    if (!entry) {
      yield { problem: { line: lineNo, column: '(line)', value: line.slice(0, 80), expected: '"<ISO time> IN|OUT <STX>telegram<ETX>"' } };
      continue;
    }
    if (entry.direction !== 'IN') continue;
    try {
      const telegram = wire.parseContent(wire.fromReadable(entry.content));
      if (telegram.flag !== 'D' || !['REQU', 'VERI', 'SCAN'].includes(telegram.type)) continue;
      if (telegram.seq === lastSeq) continue;
      const message = wire.sorterMessageOf(telegram);
      lastSeq = telegram.seq;
      yield { message };
    } catch (err) {
      if (!(err instanceof TelegramError)) throw err;
      yield { problem: { line: lineNo, column: err.field, value: err.value, expected: err.expected } };
    }
  }
}

/** Which replay file a test-mode start uses: the CSV if present, else the log, else none. */
export function findReplayFile(home: string): string | undefined {
  return REPLAY_FILES.map((f) => path.join(home, f)).find((f) => fs.existsSync(f));
}

/** Messages of a replay file by its kind. */
export function readReplayFile(file: string, wire?: TelegramWire): AsyncGenerator<ReplayItem> {
  return file.endsWith('.csv') ? readReplayCsv(file) : readReplayLog(file, wire);
}
