// The traffic log: one parseable line per telegram, rotated by size.
import fs from 'node:fs';
import path from 'node:path';
import { FLUSH_MS, TrafficLogWriter, parseTrafficLine } from '../../../lib/link/traffic-log';
import { removeHome, tempHome } from '../../helpers/home';

describe('TrafficLogWriter', () => {
  it('appends parseable lines and rotates by size, keeping the configured number of files', async () => {
    const home = tempHome();
    const file = path.join(home, 'Service_PLC.log');
    const writer = new TrafficLogWriter(file, { maxBytes: 300, keep: 2 });
    for (let i = 0; i < 20; i++)
      writer.write(new Date(Date.UTC(2026, 10, 21, 8, 0, i)), i % 2 ? 'OUT' : 'IN', `0027PLC01 WCS01 ${String(i).padStart(6, '0')}LIFED`);
    await writer.close();
    expect(fs.existsSync(`${file}.1`)).toBe(true);
    expect(fs.existsSync(`${file}.2`)).toBe(true);
    expect(fs.existsSync(`${file}.3`)).toBe(false);
    for (const f of [file, `${file}.1`]) expect(fs.statSync(f).size).toBeLessThanOrEqual(300);
    // The files kept hold the latest telegrams, oldest file first, each line whole and none missing in between.
    const kept = [`${file}.2`, `${file}.1`, file].flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .trim()
        .split('\n')
        .map((line) => parseTrafficLine(line)),
    );
    const seqs = kept.map((t) => Number(t?.content.slice(16, 22)));
    expect(seqs[seqs.length - 1]).toBe(19);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 20 - seqs.length + i));
    expect(kept.map((t) => t?.direction)).toEqual(seqs.map((i) => (i % 2 ? 'OUT' : 'IN')));
    removeHome(home);
  });

  it('gathers the lines of FLUSH_MS into one write call, in order; close writes out what is gathered at once', async () => {
    const home = tempHome();
    const file = path.join(home, 'Service_PLC.log');
    const writes = jest.spyOn(fs.WriteStream.prototype, 'write');
    try {
      const writer = new TrafficLogWriter(file, { maxBytes: 10 * 1024 * 1024, keep: 2 });
      const line = (i: number) =>
        writer.write(new Date(Date.UTC(2026, 10, 21, 8, 0, 0, i)), 'IN', `0027PLC01 WCS01 ${String(i).padStart(6, '0')}LIFED`);
      for (let i = 0; i < 500; i++) line(i);
      expect(writes).not.toHaveBeenCalled();
      // Without close (as before a crash): on the file within FLUSH_MS and the stream's own write.
      const started = Date.now();
      while (fs.statSync(file).size < 500 * 60 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 10));
      expect(writes).toHaveBeenCalledTimes(1);
      for (let i = 500; i < 600; i++) line(i);
      await writer.close(); // long before FLUSH_MS
      expect(writes).toHaveBeenCalledTimes(2);
      const seqs = fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => Number(parseTrafficLine(l)?.content.slice(16, 22)));
      expect(seqs).toEqual(Array.from({ length: 600 }, (_, i) => i));
      expect(FLUSH_MS).toBeLessThanOrEqual(100); // what docs/traffic-log.md promises an operator watching the file
    } finally {
      writes.mockRestore();
      removeHome(home);
    }
  });

  it('survives a disk that refuses writes (ENOSPC): says so once, drops lines, never throws', async () => {
    const failures: string[] = [];
    const writer = new TrafficLogWriter(
      '/dev/full',
      { maxBytes: 10 * 1024 * 1024, keep: 2 },
      { failed: (err) => failures.push((err as NodeJS.ErrnoException).code ?? err.message), recovered: () => {} },
    );
    const line = (i: number) => writer.write(new Date(), 'IN', `0027PLC01 WCS01 ${String(i).padStart(6, '0')}LIFED`);
    for (let i = 0; i < 5; i++) line(i);
    for (let i = 0; i < 50 && failures.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    for (let i = 5; i < 100; i++) line(i); // dropped while failed, without an error
    await new Promise((r) => setTimeout(r, 50));
    expect(failures).toEqual(['ENOSPC']);
    await writer.close();
  });

  it('keeps a reserve of free space for the database: below it, it pauses, says so once, writes nothing', async () => {
    const home = tempHome();
    const file = path.join(home, 'Service_PLC.log');
    const s = fs.statfsSync(home);
    const free = s.bavail * s.bsize;
    const events: string[] = [];
    // A reserve larger than the disk's free space: paused from the start.
    const writer = new TrafficLogWriter(
      file,
      { maxBytes: 1 << 20, keep: 2, minFreeBytes: free * 2 },
      {
        failed: () => events.push('failed'),
        recovered: () => events.push('recovered'),
        reserve: (paused) => events.push(paused ? 'paused' : 'resumed'),
      },
    );
    for (let i = 0; i < 20; i++) writer.write(new Date(), 'IN', `0027PLC01 WCS01 ${String(i).padStart(6, '0')}LIFED`);
    await new Promise((r) => setTimeout(r, 1100)); // past the next look at the free space
    for (let i = 0; i < 20; i++) writer.write(new Date(), 'IN', `0027PLC01 WCS01 ${String(i).padStart(6, '0')}LIFED`);
    await writer.close();
    expect(events).toEqual(['paused']);
    expect(fs.statSync(file).size).toBe(0);
    // With a reserve the disk can keep, it writes.
    const ok = new TrafficLogWriter(`${file}.b`, { maxBytes: 1 << 20, keep: 2, minFreeBytes: 4096 });
    ok.write(new Date(), 'IN', '0027PLC01 WCS01 000001LIFED');
    await ok.close();
    expect(fs.statSync(`${file}.b`).size).toBeGreaterThan(0);
    removeHome(home);
  });

  it('looks at the free space again only once it has written 64 KB since the last look, at most once a second', async () => {
    const home = tempHome();
    const file = path.join(home, 'Service_PLC.log');
    const looks = jest.spyOn(fs, 'statfs');
    try {
      const writer = new TrafficLogWriter(file, { maxBytes: 10 * 1024 * 1024, keep: 2, minFreeBytes: 4096 });
      const life = () => writer.write(new Date(), 'OUT', '0027WCS01 PLC01 000000LIFED');
      // A quiet line: a LIFE now and then, seconds apart, costs no look.
      life();
      await new Promise((r) => setTimeout(r, 1100));
      life();
      expect(looks).not.toHaveBeenCalled();
      // Traffic: 64 KB of lines, then a look (a second after the last: at once here), and no
      // other before another second has passed.
      const line = `0151PLC01 WCS01 000001REQUD${'x'.repeat(120)}`;
      for (let written = 0; written < 64 * 1024; written += line.length + 30) writer.write(new Date(), 'IN', line);
      life();
      expect(looks).toHaveBeenCalledTimes(1);
      for (let written = 0; written < 64 * 1024; written += line.length + 30) writer.write(new Date(), 'IN', line);
      life();
      expect(looks).toHaveBeenCalledTimes(1);
      await writer.close();
    } finally {
      looks.mockRestore();
      removeHome(home);
    }
  });
});
