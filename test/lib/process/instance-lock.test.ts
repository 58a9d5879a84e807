// One service per home (lib/process/instance-lock.ts) on a real lock file: a second lock on the
// same home is refused naming the holder, another home is free, and a release frees it.
import fs from 'node:fs';
import path from 'node:path';
import { InstanceLockedError, lockInstance } from '../../../lib/process/instance-lock';
import { removeHome, tempHome } from '../../helpers/home';

let home: string;
let other: string;
beforeEach(() => {
  home = tempHome();
  other = tempHome();
});
afterEach(() => {
  removeHome(home);
  removeHome(other);
});

describe('lockInstance', () => {
  it('takes the home, notes who holds it, refuses a second taker naming the holder, and frees it on release', () => {
    const first = lockInstance(home);
    try {
      const note = fs.readFileSync(path.join(home, 'data/instance.pid'), 'utf8');
      expect(note).toMatch(new RegExp(`^pid ${process.pid}, started \\d{4}-\\d\\d-\\d\\dT`));
      let refused: unknown;
      try {
        lockInstance(home);
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(InstanceLockedError);
      expect((refused as InstanceLockedError).message).toBe(
        `another instance of the service is running on ${home} (${note.trim()}); stop it first, or give this one its own SORTER_HOME`,
      );
      // Another home is another instance's.
      lockInstance(other).release();
    } finally {
      first.release();
    }
    const again = lockInstance(home);
    again.release();
    again.release(); // twice is harmless
  });

  it('tells whether the run before stopped cleanly: a clean release removes the note, any other end leaves it', () => {
    const first = lockInstance(home);
    expect(first.lastStopClean).toBe(true); // no run before
    first.release(); // as after a crash: the note stays
    const second = lockInstance(home);
    expect(second.lastStopClean).toBe(false);
    second.release(true);
    expect(fs.existsSync(path.join(home, 'data/instance.pid'))).toBe(false);
    const third = lockInstance(home);
    expect(third.lastStopClean).toBe(true);
    third.release(true);
  });

  it('a holder that has not written its note yet is "process unknown"', () => {
    const first = lockInstance(home);
    try {
      fs.rmSync(path.join(home, 'data/instance.pid'));
      expect(() => lockInstance(home)).toThrow(`(process unknown)`);
    } finally {
      first.release();
    }
  });
});
