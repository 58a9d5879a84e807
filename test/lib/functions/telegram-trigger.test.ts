// The telegram trigger (lib/functions/telegram-trigger.ts): each data telegram type runs the
// function the manifest binds to it, with the deps as they are at that telegram, and counts as
// work for the event loop's sampler; a type no function takes is refused with NAK 03.
import type { Deps } from '../../../lib/deps';
import type { Manifest } from '../../../lib/functions/manifest';
import { telegramTrigger } from '../../../lib/functions/telegram-trigger';
import { RefuseError } from '../../../lib/link/session-port';
import { NakReason } from '../../../bench/v1-codec';
import type { InboundMessage } from '../../../lib/link/session-port';
import type { RecordingDeps } from '../../fixtures/functions/record-telegram';
import { induct } from '../../helpers/messages';

const manifest: Manifest = {
  service: 'test',
  functions: {
    record: {
      handler: 'test/fixtures/functions/record-telegram',
      description: 'Record',
      events: [{ telegram: { types: ['REQU', 'VERI'] } }],
    },
  },
};
const event = (seq: number, trackId: string): InboundMessage => ({
  seq,
  after: seq - 1,
  arrivedAt: 0,
  message: induct(trackId, { Length: 1, Width: 1, Height: 1, Weight: 1 }),
});

describe('telegramTrigger', () => {
  it('runs the bound function for each of its types, with the deps of the moment', async () => {
    let busy = 0;
    const deps: RecordingDeps & Pick<Deps, 'eventLoop'> = {
      seen: [],
      who: 'first',
      eventLoop: { delayP99Ms: () => 0, busy: () => void (busy += 1) },
    };
    const receive = telegramTrigger(manifest, () => deps as unknown as Deps);
    await receive('REQU', event(1, 'A'));
    deps.who = 'second';
    await receive('VERI', event(2, 'B'));
    expect(deps.seen).toEqual([
      { who: 'first', seq: 1, trackId: 'A' },
      { who: 'second', seq: 2, trackId: 'B' },
    ]);
    expect(busy).toBe(2);
  });

  it('refuses a type no function takes with NAK 03, naming it', async () => {
    const receive = telegramTrigger(manifest, () => ({ seen: [], who: 'x' }) as unknown as Deps);
    const refused = receive('SCAN', event(3, 'C'));
    await expect(refused).rejects.toBeInstanceOf(RefuseError);
    await expect(refused).rejects.toMatchObject({ code: NakReason.UNEXPECTED, message: 'no function takes SCAN (manifest.json)' });
  });
});
