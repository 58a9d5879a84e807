// Replay files: CSV and traffic-log parsing, with errors that name the line and the field.
import fs from 'node:fs';
import path from 'node:path';
import {
  type ReplayItem,
  ReplayFileError,
  csvRecordToItem,
  findReplayFile,
  readReplayCsv,
  readReplayLog,
} from '../../../lib/testmode/replay';
import { CSV_HEADER, csv, removeHome, requestRow, scanRow, tempHome, verifyRow } from '../../helpers/home';

const fields = (row: string) => row.split(',');
const collect = async (gen: AsyncGenerator<ReplayItem>) => {
  const items: ReplayItem[] = [];
  for await (const item of gen) items.push(item);
  return items;
};

describe('CSV rows', () => {
  it('maps a REQUEST row to InductDto, DeviceID to InductLocation, RecircCount to RecirculationCount', () => {
    expect(csvRecordToItem(fields('REQUEST,210,IND02,0004711,00012345678901234567,320.5,210,95,1.25,3,,,,,'), 2)).toEqual({
      message: {
        Type: 'REQUEST',
        TrackID: '0004711',
        Barcode: '00012345678901234567',
        MessageCode: 210,
        InductLocation: 'IND02',
        RecirculationCount: 3,
        Length: 320.5,
        Width: 210,
        Height: 95,
        Weight: 1.25,
      },
    });
  });

  it('turns empty dimensions and weight into 0', () => {
    const item = csvRecordToItem(fields('REQUEST,210,IND01,7,X,,,,,0,,,,,'), 2);
    expect(item).toMatchObject({ message: { Length: 0, Width: 0, Height: 0, Weight: 0 } });
  });

  it('maps a VERIFY row, DeviceID to Destination', () => {
    expect(csvRecordToItem(fields(verifyRow('0001', 'D017')), 2)).toEqual({
      message: { Type: 'VERIFY', TrackID: '0001', Barcode: 'BC0001', Destination: 'D017', MessageCode: 212 },
    });
  });

  it('maps a SCAN row: NONE button is 0, BatchDoorStatus null, empty text ""', () => {
    expect(csvRecordToItem(fields(scanRow('D003', 'NotReady')), 2)).toEqual({
      message: {
        Type: 'SCAN',
        Destination: 'D003',
        DestinationStatus: 'NotReady',
        DestinationText: '',
        LightStatus: 'Off',
        LightColor: 'Off',
        ButtonID: 0,
        MessageCode: 211,
        BatchDoorStatus: null,
      },
    });
    expect(csvRecordToItem(fields('SCAN,211,D1,,,,,,,,Ready,Solid,BLUE,Tour 4,7'), 2)).toMatchObject({
      message: { ButtonID: 7, DestinationText: 'Tour 4', LightColor: 'BLUE' },
    });
  });

  it.each([
    ['request', 'request,210,IND01,1,B,,,,,0,,,,,', 'Type'],
    ['PARCEL', 'PARCEL,210,IND01,1,B,,,,,0,,,,,', 'Type'],
    ['ready', 'SCAN,211,D1,,,,,,,,ready,Off,Off,,NONE', 'DestinationStatus'],
    ['OFF', 'SCAN,211,D1,,,,,,,,Ready,OFF,Off,,NONE', 'LightStatus'],
    ['blue', 'SCAN,211,D1,,,,,,,,Ready,Off,blue,,NONE', 'LightColor'],
    ['x12', 'REQUEST,x12,IND01,1,B,,,,,0,,,,,', 'MessageCode'],
    ['1,5', 'REQUEST,210,IND01,1,B,,,,"1,5",0,,,,,', 'Weight'],
    ['abc', 'REQUEST,210,IND01,1,B,abc,,,,0,,,,,', 'Length'],
    ['two', 'REQUEST,210,IND01,1,B,,,,,two,,,,,', 'RecircCount'],
    ['A', 'SCAN,211,D1,,,,,,,,Ready,Off,Off,,A', 'ButtonID'],
    ['a 20-digit ButtonID', 'SCAN,211,D1,,,,,,,,Ready,Off,Off,,12345678901234567890', 'ButtonID'],
    ['a 6-digit MessageCode', 'REQUEST,210000,IND01,1,B,,,,,0,,,,,', 'MessageCode'],
    ['empty TrackID', 'VERIFY,212,D1,,B,,,,,,,,,,', 'TrackID'],
    ['empty DeviceID', 'SCAN,211,,,,,,,,,Ready,Off,Off,,NONE', 'DeviceID'],
  ])('skips a row with %s, naming column %s', (_what, row, column) => {
    const record = row.includes('"') ? ['REQUEST', '210', 'IND01', '1', 'B', '', '', '', '1,5', '0', '', '', '', '', ''] : fields(row);
    const item = csvRecordToItem(record, 9);
    expect(item).toMatchObject({ problem: { line: 9, column } });
    expect('problem' in item && item.problem.expected).toBeTruthy();
  });

  it('skips a row with the wrong number of columns', () => {
    expect(csvRecordToItem(['REQUEST', '210'], 4)).toEqual({
      problem: { line: 4, column: '(row)', value: '2 columns', expected: '15 columns' },
    });
  });
});

describe('CSV files', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('streams rows in file order with their line numbers, past a BOM and CRLF line ends', async () => {
    home = tempHome({
      'Service_PLC.csv': '\ufeff' + csv(requestRow('1'), 'SCAN,211,D1,,,,,,,,Bad,Off,Off,,NONE', verifyRow('1')).replace(/\n/g, '\r\n'),
    });
    const items = await collect(readReplayCsv(path.join(home, 'Service_PLC.csv')));
    expect(items.map((i) => ('message' in i ? i.message.Type : `skip@${i.problem.line}`))).toEqual(['REQUEST', 'skip@3', 'VERIFY']);
  });

  it('counts lines exactly across empty lines and quoted fields that span lines', async () => {
    const body = [
      CSV_HEADER,
      '', // line 2: empty
      requestRow('1'), // 3
      'SCAN,211,D1,,,,,,,,Ready,Off,Off,"two\nlines",NONE', // 4-5
      '',
      'SCAN,211,D1,,,,,,,,Bad,Off,Off,,NONE', // 7: skipped, reported on its own line
      'SCAN,211,D2,,,,,,,,Ready,Off,Off,"three\r\nline\ntext",1', // 8-10
      verifyRow('1'), // 11
      'VERIFY,x,D1,2,B,,,,,,,,,,', // 12: skipped
    ].join('\n');
    home = tempHome({ 'Service_PLC.csv': body + '\n' });
    const items = await collect(readReplayCsv(path.join(home, 'Service_PLC.csv')));
    expect(items.map((i) => ('message' in i ? i.message.Type : `skip@${i.problem.line}`))).toEqual([
      'REQUEST',
      'SCAN',
      'skip@7',
      'SCAN',
      'VERIFY',
      'skip@12',
    ]);
    expect(items[1]).toMatchObject({ message: { DestinationText: 'two\nlines' } });
  });

  it('takes a stray quote literally and skips a record whose quote never closes, loading every row before it', async () => {
    const body = [
      CSV_HEADER,
      requestRow('1'), // 2
      'REQUEST,210,IND01,A"2,BC,1,1,1,1,0,,,,,', // 3: a quote inside a field is just a character
      'REQUEST,210,IND01,"A3"x,BC,1,1,1,1,0,,,,,', // 4: text after a closing quote, likewise
      verifyRow('1'), // 5
      'SCAN,211,D1,,,,,,,,Ready,Off,Off,"never closed,NONE', // 6: swallows the rest of the file
      requestRow('7'),
    ].join('\n');
    home = tempHome({ 'Service_PLC.csv': body + '\n' });
    const items = await collect(readReplayCsv(path.join(home, 'Service_PLC.csv')));
    expect(
      items.map((i) =>
        'message' in i ? `${i.message.Type}:${'TrackID' in i.message ? i.message.TrackID : ''}` : `skip@${i.problem.line}`,
      ),
    ).toEqual(['REQUEST:1', 'REQUEST:A"2', 'REQUEST:"A3"x', 'VERIFY:1', 'skip@6']);
    expect(items[4]).toMatchObject({ problem: { column: '(record)', expected: 'a CSV record whose quoted fields are closed' } });
  });

  it('rejects a file whose header is not exactly the spec one', async () => {
    home = tempHome({ 'Service_PLC.csv': CSV_HEADER.replace('RecircCount', 'RecirculationCount') + '\n' + requestRow('1') + '\n' });
    await expect(collect(readReplayCsv(path.join(home, 'Service_PLC.csv')))).rejects.toThrow(ReplayFileError);
  });

  it('prefers the CSV over the log, and uses the log when the CSV is absent', () => {
    home = tempHome({ 'Service_PLC.csv': csv(), 'Service_PLC.log': '' });
    expect(path.basename(findReplayFile(home)!)).toBe('Service_PLC.csv');
    fs.rmSync(path.join(home, 'Service_PLC.csv'));
    expect(path.basename(findReplayFile(home)!)).toBe('Service_PLC.log');
    fs.rmSync(path.join(home, 'Service_PLC.log'));
    expect(findReplayFile(home)).toBeUndefined();
  });
});

describe('traffic log replay', () => {
  const fixture = path.join(__dirname, '../../fixtures/Service_PLC.log');

  it('replays the sorter-to-service data telegrams once each, in order', async () => {
    const items = await collect(readReplayLog(fixture));
    expect(items.every((i) => 'message' in i)).toBe(true);
    const messages = items.map((i) => ('message' in i ? i.message : null));
    expect(messages.map((m) => m!.Type)).toEqual(['SCAN', 'REQUEST', 'VERIFY', 'SCAN']);
    expect(messages[1]).toEqual({
      Type: 'REQUEST',
      TrackID: '0004711',
      Barcode: '4006381333931',
      MessageCode: 210,
      InductLocation: 'IND01',
      RecirculationCount: 0,
      Length: 320.5,
      Width: 210,
      Height: 95,
      Weight: 1.25,
    });
    expect(messages[3]).toMatchObject({ Destination: 'D003', DestinationText: 'Tour 17', ButtonID: 2, BatchDoorStatus: 'OPENED' });
  });

  it('skips malformed lines and telegrams with their line number', async () => {
    const good = fs.readFileSync(fixture, 'utf8').split('\n');
    const req = good.find((l) => l.includes('REQUD'))!;
    const home = tempHome({
      'Service_PLC.log': [req, 'not a telegram', req.replace('000102', '000103').replace('IND01', '     '), ''].join('\n'),
    });
    const items = await collect(readReplayLog(path.join(home, 'Service_PLC.log')));
    expect(items).toHaveLength(3);
    expect(items[0]).toHaveProperty('message');
    expect(items[1]).toMatchObject({ problem: { line: 2, column: '(line)' } });
    expect(items[2]).toMatchObject({ problem: { line: 3, column: 'InductLocation' } });
    removeHome(home);
  });
});
