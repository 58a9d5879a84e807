// Free space on a disk (lib/host/disk.ts), read from the real file system.
import fs from 'node:fs';
import os from 'node:os';
import { freeBytes } from '../../../lib/host/disk';

it("gives the bytes a writer may still use on a folder's file system, and null for a folder that is not there", () => {
  const free = freeBytes(os.tmpdir());
  const s = fs.statfsSync(os.tmpdir());
  expect(free).toBe(s.bavail * s.bsize);
  expect(free).toBeGreaterThan(0);
  expect(freeBytes('/no/such/folder/here')).toBeNull();
});
