// The link as the rest of the service sees it (lib/link/sorter-link-status.ts): the status of a
// live link from its figures, and the link of test mode, which shows the same fields, all zero.
import { linkStatus, offlineLink } from '../../../lib/link/sorter-link-status';

const figures = {
  connected: true,
  address: '10.0.0.5:2000',
  since: '2026-01-02T03:04:05.000Z',
  lastInAt: Date.parse('2026-01-02T03:04:06.000Z'),
  lastOutAt: 0,
  counters: { telegramsIn: 1, telegramsOut: 2, resends: 3, naksSent: 4, naksReceived: 5, duplicatesReceived: 6, garbageBytes: 7 },
  connections: { made: 3, lost: 2, failedAttempts: 8 },
  dropped: { assignments: 9, settings: 10 },
  inFlight: 11,
  refusing: null,
};

describe('linkStatus', () => {
  it('shows every figure under its GET /status name, times as ISO or null, and no first connection as a reconnect', () => {
    expect(linkStatus(figures)).toEqual({
      Connected: true,
      Address: '10.0.0.5:2000',
      Since: '2026-01-02T03:04:05.000Z',
      LastTelegramIn: '2026-01-02T03:04:06.000Z',
      LastTelegramOut: null,
      State: 'Connected',
      RefusingBecause: null,
      TelegramsIn: 1,
      TelegramsOut: 2,
      Resends: 3,
      NaksSent: 4,
      NaksReceived: 5,
      DuplicatesReceived: 6,
      GarbageBytes: 7,
      Reconnects: 2,
      ConnectionsLost: 2,
      ConnectAttemptsFailed: 8,
      DroppedAssignments: 9,
      DroppedSettings: 10,
      InFlight: 11,
    });
    expect(linkStatus({ ...figures, connections: { made: 0, lost: 0, failedAttempts: 1 } }).Reconnects).toBe(0);
  });

  it("says Refusing, and why, while the sorter's telegrams are refused for a reason that will not pass by itself; Disconnected whatever the reason when the link is down", () => {
    const reason = 'acceptFromPeer failed: SQLITE_ERROR: no such table: sortation_queue';
    expect(linkStatus({ ...figures, refusing: reason })).toMatchObject({ Connected: true, State: 'Refusing', RefusingBecause: reason });
    expect(linkStatus({ ...figures, connected: false, refusing: reason })).toMatchObject({
      Connected: false,
      State: 'Disconnected',
      RefusingBecause: reason,
    });
  });
});

describe('offlineLink', () => {
  it('is not connected, shows the same fields as a live link in the same order, all zero, and queues what it is offered', async () => {
    const link = offlineLink('10.0.0.5:2000');
    const status = link.status();
    expect(Object.keys(status)).toEqual(Object.keys(linkStatus(figures)));
    expect(status).toMatchObject({
      Connected: false,
      Address: '10.0.0.5:2000',
      Since: null,
      LastTelegramIn: null,
      LastTelegramOut: null,
      State: 'Disconnected',
      RefusingBecause: null,
    });
    expect(
      Object.values(status)
        .slice(7)
        .every((v) => v === 0),
    ).toBe(true);
    expect(link.recentTelegrams()).toEqual([]);
    expect(link.offer({} as Parameters<typeof link.offer>[0])).toBe('Queued');
    await expect(link.stop()).resolves.toBeUndefined();
  });
});
