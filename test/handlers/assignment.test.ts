// POST /sortation as a handler: the normalised assignment to the outbox, 503 when storage cannot take it.
import { StoredAges } from '../../lib/queue/arrivals';
import { postAssignment } from '../../handlers/assignment';
import { fakeOutbox, link, clock, settings } from '../helpers/handler-fakes';

/** Records the TrackIDs whose REQUEST an assignment proves read. */
const answers = () => {
  const answered: string[] = [];
  const assigned: string[] = [];
  return {
    answered,
    answeredDeps: { answered: (t: string) => void answered.push(t) },
    assigned,
    decisions: { assigned: (t: string) => void assigned.push(t) },
  };
};

describe('postAssignment', () => {
  it('live mode: writes the normalised assignment to the outbox and says how it travels', async () => {
    const outbox = fakeOutbox();
    const { answered, answeredDeps, assigned, decisions } = answers();
    const result = await postAssignment(
      { testMode: false, outbox, link: link('Queued'), clock, ages: new StoredAges(clock), settings, deliveries: answeredDeps, decisions },
      { body: { TrackID: '0004711', Destination: 'D1' }, clientAddress: '10.1.1.1' },
    );
    expect(answered).toEqual(['0004711']); // the REQUEST it answers was read (X-Ack-Mode explicit)
    expect(assigned).toEqual(['0004711']); // its decision latency ends here
    expect(result).toEqual({
      kind: 'ok',
      status: 200,
      body: {
        Accepted: true,
        Delivery: 'Queued',
        OutboxID: 1,
        Message: { TrackID: '0004711', Destination: 'D1', Barcode: '' },
        DefaultsApplied: [],
      },
    });
    expect(outbox.added).toEqual([
      {
        message: { kind: 'ASSIGNMENT', body: { TrackID: '0004711', Destination: 'D1', Barcode: '' } },
        client: '10.1.1.1',
        at: '2026-11-21T12:00:00.000Z',
        cancelAfterMs: 2000,
      },
    ]);
  });

  it('storage that cannot write in time: 503 with the reason, as a value (nothing was written)', async () => {
    const outbox = fakeOutbox('addToOutbox not written: the storage did not start it within 2000 ms');
    const { answered, answeredDeps, assigned, decisions } = answers();
    const result = await postAssignment(
      { testMode: false, outbox, link: link('Queued'), clock, ages: new StoredAges(clock), settings, deliveries: answeredDeps, decisions },
      { body: { TrackID: '1', Destination: 'D1' }, clientAddress: null },
    );
    expect(answered).toEqual(['1']); // read, even if its answer could not be kept
    expect(assigned).toEqual([]); // not decided: the client sends it again
    expect(result).toEqual({
      kind: 'unavailable',
      retryAfterSeconds: 1,
      reason: expect.stringMatching(/^not accepted, nothing was written, send it again: addToOutbox not written/),
    });
  });

  it("a value the sorter's layout cannot carry: 400 naming the field, nothing written, no decision", async () => {
    const outbox = fakeOutbox();
    const { answeredDeps, assigned, decisions } = answers();
    const why = '"Destination" does not fit the sorter\'s telegram layout site: its DEST takes at most 4 characters, got "CHUTE-15"';
    const result = await postAssignment(
      {
        testMode: false,
        outbox,
        link: link('Queued', why),
        clock,
        ages: new StoredAges(clock),
        settings,
        deliveries: answeredDeps,
        decisions,
      },
      { body: { TrackID: '1', Destination: 'CHUTE-15' }, clientAddress: null },
    );
    expect(result).toEqual({ kind: 'ok', status: 400, body: { statusCode: 400, error: 'Bad Request', message: why } });
    expect(outbox.added).toHaveLength(0);
    expect(assigned).toEqual([]);
  });

  it('test mode: acknowledges and writes nothing', async () => {
    const outbox = fakeOutbox();
    const a = answers();
    const result = await postAssignment(
      {
        testMode: true,
        outbox,
        link: link('Sent'),
        clock,
        ages: new StoredAges(clock),
        settings,
        deliveries: a.answeredDeps,
        decisions: a.decisions,
      },
      { body: { TrackID: '1', Destination: 'D1', Barcode: 'B' }, clientAddress: null },
    );
    expect(result).toMatchObject({ body: { Delivery: 'NotSent', OutboxID: null, Message: { Barcode: 'B' } } });
    expect(outbox.added).toHaveLength(0);
  });
});
