// Replay files with every kind of damage, as a site hands them over: the service starts, loads
// the good rows in file order, reports the bad ones (counted in /status, the first 20 logged one
// by one, then a summary), and a file of 10,000 bad rows does not flood the log.
import fc from 'fast-check';
import { call } from '../../helpers/http';
import { CSV_HEADER, removeHome, requestRow, scanRow, tempHome, verifyRow } from '../../helpers/home';
import { startServiceProcess } from '../../helpers/process';
import { SOAK, report, seed } from './scale';
import { nth } from '../../helpers/nth';

jest.setTimeout(120_000 * SOAK);

/** One kind of damage each: the row is skipped, the file still loads. */
const damaged = (i: number) => [
  `request,210,IND01,B${i},BC,1,1,1,1,0,,,,,`, // keyword not spelled canonically
  `PARCEL,210,IND01,B${i},BC,1,1,1,1,0,,,,,`, // unknown Type
  `REQUEST,21O,IND01,B${i},BC,1,1,1,1,0,,,,,`, // a letter in a number
  `REQUEST,210,IND01,B${i},BC,1,1,1`, // columns missing
  `REQUEST,210,IND01,B${i},BC,1,1,1,1,0,,,,,,,,`, // columns too many
  `VERIFY,212,D01,,BC,,,,,,,,,,`, // empty TrackID
  `SCAN,211,D01,,,,,,,,Maybe,Off,Off,,NONE`, // not a DestinationStatus
  `SCAN,211,D01,,,,,,,,Ready,Off,Off,,12345678901234567890`, // a ButtonID wider than its field
  `REQUEST,999999,IND01,B${i},BC,1,1,1,1,0,,,,,`, // MessageCode wider than its field
  `\u0000\u0001binary\u00ff junk ${i}`, // not CSV at all
  `REQUEST;210;IND01;B${i};BC;1;1;1;1;0;;;;;`, // another separator
  `REQUEST,210,IND01,B${i},BC,1e400,1,1,1,0,,,,,`, // a number that is not finite
];
const KINDS = damaged(0).length;

describe('replay files with every kind of damage', () => {
  let home: string;
  afterEach(() => removeHome(home));

  it('10,000 bad rows among good ones: starts, loads the good rows in order, counts the bad, logs the first 20 and a summary', async () => {
    const bad = 10_000 * SOAK;
    // Where the good rows stand among the bad, drawn by fast-check (seeded).
    const goodAt = new Set(fc.sample(fc.integer({ min: 0, max: bad - 1 }), { numRuns: 300, seed }));
    const rows: string[] = [];
    const good: string[] = [];
    for (let i = 0; i < bad; i++) {
      if (goodAt.has(i)) {
        const id = `G${i}`;
        rows.push(nth([requestRow(id), verifyRow(id), scanRow(`D${i}`)], i % 3));
        good.push(id);
      }
      rows.push(nth(damaged(i), i % KINDS));
    }
    home = tempHome({
      'config.json': { TestMode: true, Port: 0, Host: '127.0.0.1' },
      'Service_PLC.csv': `${CSV_HEADER}\n${rows.join('\n')}\n`,
    });
    const svc = await startServiceProcess(home, {}, 60_000);
    const status = (await call(svc.base, 'GET', '/status')).json;
    const skippedLines = svc.logs.filter((l) => /^replay row skipped/.test(String(l.msg)));
    const summary = svc.logs.filter((l) => /more rows skipped, not logged one by one/.test(String(l.msg)));
    // The good rows come out in file order.
    const first = (await call(svc.base, 'GET', '/sortation?timeOut=0')).json;
    await svc.stop();
    report('replay-damage', {
      seed,
      rows: rows.length,
      good: good.length,
      bad,
      kinds: KINDS,
      loaded: status.Replay.RowsLoaded,
      skipped: status.Replay.RowsSkipped,
      log_lines_for_skipped: skippedLines.length + summary.length,
    });

    expect(status.Replay).toMatchObject({ File: 'Service_PLC.csv', RowsLoaded: good.length, RowsSkipped: bad, Error: null });
    expect(status['Sortation Q'] + status['Destination Q']).toBe(good.length);
    expect(skippedLines).toHaveLength(20);
    expect(summary).toHaveLength(1);
    expect(first.TrackID).toBe(good.find((id) => Number(id.slice(1)) % 3 !== 2)); // the first REQUEST or VERIFY row
  });
});
