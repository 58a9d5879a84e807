// POST /destination as a handler: lenient enums with defaults, the outbox in live mode.
import { StoredAges } from '../../lib/queue/arrivals';
import { normaliseDestinationSetting, postDestinationSettings } from '../../handlers/destination-settings';
import { fakeOutbox, link, clock, settings } from '../helpers/handler-fakes';

describe('destination settings', () => {
  it('parses enums case-insensitively into canonical values', () => {
    const { setting, defaults } = normaliseDestinationSetting({
      Destination: 'D1',
      DestinationStatus: 'ready',
      LightStatus: 'FLASHING',
      LightColor: 'blue',
      BatchDoorStatus: 'opened',
      DestinationText: 'Tour 4',
    });
    expect(setting).toEqual({
      Destination: 'D1',
      DestinationStatus: 'Ready',
      DestinationText: 'Tour 4',
      LightStatus: 'Flashing',
      LightColor: 'BLUE',
      BatchDoorStatus: 'OPENED',
    });
    expect(defaults).toEqual([]);
  });

  it('applies the spec defaults to values that do not parse, including missing ones, and lists them', () => {
    const { setting, defaults } = normaliseDestinationSetting({
      Destination: 'D1',
      DestinationStatus: 'open',
      LightColor: 42,
      BatchDoorStatus: 'ajar',
    });
    expect(setting).toEqual({
      Destination: 'D1',
      DestinationStatus: 'NotReady',
      DestinationText: '',
      LightStatus: 'Off',
      LightColor: 'Off',
      BatchDoorStatus: null,
    });
    expect(defaults).toEqual([
      { Field: 'DestinationStatus', Received: 'open', Applied: 'NotReady' },
      { Field: 'LightStatus', Received: null, Applied: 'Off' },
      { Field: 'LightColor', Received: 42, Applied: 'Off' },
      { Field: 'BatchDoorStatus', Received: 'ajar', Applied: null },
    ]);
  });

  it('writes the normalised settings to the outbox in live mode', async () => {
    const outbox = fakeOutbox();
    const result = await postDestinationSettings(
      { testMode: false, outbox, link: link('Sent'), clock, ages: new StoredAges(clock), settings },
      { body: { Destination: 'D1', DestinationStatus: 'Ready', LightStatus: 'Off', LightColor: 'Off' }, clientAddress: null },
    );
    expect(result).toMatchObject({ body: { Delivery: 'Sent', OutboxID: 1 } });
    expect(outbox.added[0]?.message).toEqual({
      kind: 'DESTINATION',
      body: {
        Destination: 'D1',
        DestinationStatus: 'Ready',
        DestinationText: '',
        LightStatus: 'Off',
        LightColor: 'Off',
        BatchDoorStatus: null,
      },
    });
  });
});
