// Test helper: temporary service homes and replay-file rows.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary service home holding the given files (config.json as an object is serialised). */
export function tempHome(files: Record<string, string | object> = {}): string {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sorter-home-'));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(home, name)), { recursive: true });
    fs.writeFileSync(path.join(home, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return home;
}

/** Remove a temporary home. */
export function removeHome(home: string): void {
  fs.rmSync(home, { recursive: true, force: true });
}

/** The CSV header the spec prescribes. */
export const CSV_HEADER =
  'Type,MessageCode,DeviceID,TrackID,Barcode,Length,Width,Height,Weight,RecircCount,DestinationStatus,LightStatus,LightColor,DestinationText,ButtonID';

/** CSV text from rows (header added). */
export const csv = (...rows: string[]) => [CSV_HEADER, ...rows].join('\n') + '\n';

/** A REQUEST row for track id `t`. */
export const requestRow = (t: string, barcode = `BC${t}`) => `REQUEST,210,IND01,${t},${barcode},100,50,20,1.5,0,,,,,`;
/** A VERIFY row. */
export const verifyRow = (t: string, dest = 'D001') => `VERIFY,212,${dest},${t},BC${t},,,,,,,,,,`;
/** A SCAN row. */
export const scanRow = (dest: string, status = 'Ready', button = 'NONE') => `SCAN,211,${dest},,,,,,,,${status},Off,Off,,${button}`;
