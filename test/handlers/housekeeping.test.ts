// The scheduled housekeeping as a handler: purge by retention, checkpoint.
import { housekeeping } from '../../handlers/housekeeping';
import { createLogger } from '../../lib/logger';
import { clock } from '../helpers/handler-fakes';

describe('housekeeping', () => {
  it('purges history older than the retention and checkpoints', async () => {
    const cutoffs: string[] = [];
    const history = { purgeDeliveredBefore: async (c: string) => (cutoffs.push(c), 5), checkpoint: async () => ({ busy: false, walFrames: 0, checkpointed: 0 }) };
    const result = await housekeeping({ history, clock, settings: { HistoryRetentionDays: 7 }, log: createLogger('silent') });
    expect(cutoffs).toEqual(['2026-11-14T12:00:00.000Z']);
    expect(result).toMatchObject({ body: { PurgedHistoryRows: 5 } });
  });
});
