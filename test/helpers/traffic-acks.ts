// Test helper: what the service acknowledged to the sorter, read from its traffic log
// (Service_PLC.log, protocol version 1): the numbers of the REQU, VERI and SCAN telegrams it
// answered with an ACK. A line may be missing at the very end after a kill, never one too many.
import fs from 'node:fs';
import path from 'node:path';

/** The telegram numbers acknowledged in `home`'s traffic log, per type. */
export function acknowledgedTelegrams(home: string): Record<'REQU' | 'VERI' | 'SCAN', Set<string>> {
  const acked = { REQU: new Set<string>(), VERI: new Set<string>(), SCAN: new Set<string>() };
  for (const line of fs.readFileSync(path.join(home, 'Service_PLC.log'), 'utf8').split('\n')) {
    const m = / OUT <STX>\d{4}\S+ \S+ (\d{6})(REQU|VERI|SCAN)A<ETX>$/.exec(line);
    if (m?.[1] && (m[2] === 'REQU' || m[2] === 'VERI' || m[2] === 'SCAN')) acked[m[2]].add(m[1]);
  }
  return acked;
}
