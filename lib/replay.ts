import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parse } from 'csv-parse';
import { DestinationStatus, LightColor, LightStatus, MessageType, isExactEnum } from './enums';
import type { SorterMessage } from './messages';
import { TelegramError, parseContent, sorterMessageOf } from './telegram';
import { parseTrafficLine } from './traffic-log';

/** The exact header of Service_PLC.csv, in order (spec section 1, "Test mode"). */
export const CSV_COLUMNS = [
  'Type', 'MessageCode', 'DeviceID', 'TrackID', 'Barcode', 'Length', 'Width', 'Height', 'Weight',
  'RecircCount', 'DestinationStatus', 'LightStatus', 'LightColor', 'DestinationText', 'ButtonID',
] as const;

/** Replay files in the service home, in order of preference (spec's table: CSV first). */
export const REPLAY_FILES = ['Service_PLC.csv', 'Service_PLC.log'] as const;

/** Why a row of a replay file was skipped. */
export interface ReplayProblem {
  line: number;
  column: string;
  value: string;
  expected: string;
}

/** One message from a replay file, or the reason its row was skipped. */
export type ReplayItem = { message: SorterMessage } | { problem: ReplayProblem };

type Row = Record<(typeof CSV_COLUMNS)[number], string>;

class RowError extends Error {
  constructor(readonly column: string, readonly value: string, readonly expected: string) {
    super(`${column}: ${expected}`);
  }
}

const INTEGER = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

function integer(row: Row, column: 'MessageCode' | 'RecircCount' | 'ButtonID', emptyIs?: number): number {
  const v = row[column];
  if (v === '' && emptyIs !== undefined) return emptyIs;
  if (!INTEGER.test(v)) throw new RowError(column, v, 'a whole number');
  return Number(v);
}

/** Empty numeric columns are 0 (the DTO fields are numbers); anything else must parse. */
function decimal(row: Row, column: 'Length' | 'Width' | 'Height' | 'Weight'): number {
  const v = row[column];
  if (v === '') return 0;
  if (!DECIMAL.test(v)) throw new RowError(column, v, 'a decimal number such as 12.5');
  return Number(v);
}

function required(row: Row, column: 'DeviceID' | 'TrackID'): string {
  if (row[column] === '') throw new RowError(column, '', 'a value');
  return row[column];
}

function exact<T extends string>(row: Row, column: 'DestinationStatus' | 'LightStatus' | 'LightColor', values: readonly T[]): T {
  const v = row[column];
  if (!isExactEnum(values, v)) throw new RowError(column, v, `exactly one of ${values.join(', ')}`);
  return v;
}

/** Turn one CSV row into its message (decisions.md, "Replay data"); throws RowError. */
function messageOfRow(row: Row): SorterMessage {
  const type = row.Type;
  if (!isExactEnum(MessageType, type)) throw new RowError('Type', type, `exactly one of ${MessageType.join(', ')}`);
  switch (type) {
    case 'REQUEST':
      return {
        Type: 'REQUEST',
        TrackID: required(row, 'TrackID'),
        Barcode: row.Barcode,
        MessageCode: integer(row, 'MessageCode'),
        InductLocation: required(row, 'DeviceID'),
        RecirculationCount: integer(row, 'RecircCount', 0),
        Length: decimal(row, 'Length'),
        Width: decimal(row, 'Width'),
        Height: decimal(row, 'Height'),
        Weight: decimal(row, 'Weight'),
      };
    case 'VERIFY':
      return { Type: 'VERIFY', TrackID: required(row, 'TrackID'), Barcode: row.Barcode, Destination: required(row, 'DeviceID'), MessageCode: integer(row, 'MessageCode') };
    case 'SCAN':
      return {
        Type: 'SCAN',
        Destination: required(row, 'DeviceID'),
        DestinationStatus: exact(row, 'DestinationStatus', DestinationStatus),
        DestinationText: row.DestinationText,
        LightStatus: exact(row, 'LightStatus', LightStatus),
        LightColor: exact(row, 'LightColor', LightColor),
        // NONE is the replay files' "no button": the field is an integer, so it is 0.
        ButtonID: row.ButtonID === 'NONE' ? 0 : integer(row, 'ButtonID', 0),
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
  const row = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, fields[i]])) as Row;
  try {
    return { message: messageOfRow(row) };
  } catch (err) {
    if (err instanceof RowError) return { problem: { line, column: err.column, value: err.value, expected: err.expected } };
    throw err;
  }
}

/** Raised when a replay file cannot be used at all (unreadable, wrong header). */
export class ReplayFileError extends Error {}

/** Stream the messages of a Service_PLC.csv in file order. */
export async function* readReplayCsv(file: string): AsyncGenerator<ReplayItem> {
  const parser = fs.createReadStream(file).pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }));
  let header = true;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    if (header) {
      header = false;
      if (record.join(',') !== CSV_COLUMNS.join(',')) {
        throw new ReplayFileError(`${path.basename(file)} line ${info.lines}: header must be exactly "${CSV_COLUMNS.join(',')}", found "${record.join(',')}"`);
      }
      continue;
    }
    yield csvRecordToItem(record, info.lines);
  }
}

/**
 * Stream the sorter-to-service messages recorded in a Service_PLC.log, in file order.
 * Only IN data telegrams of type REQU, VERI and SCAN carry messages; acknowledgements,
 * heartbeats and our own OUT telegrams are not replayed. A telegram the sorter repeated
 * (same sequence number as the last one accepted) is replayed once, as the live link queues it once.
 */
export async function* readReplayLog(file: string): AsyncGenerator<ReplayItem> {
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
      const telegram = parseContent(entry.content);
      if (telegram.flag !== 'D' || !['REQU', 'VERI', 'SCAN'].includes(telegram.type)) continue;
      if (telegram.seq === lastSeq) continue;
      const message = sorterMessageOf(telegram);
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
export function readReplayFile(file: string): AsyncGenerator<ReplayItem> {
  return file.endsWith('.csv') ? readReplayCsv(file) : readReplayLog(file);
}
