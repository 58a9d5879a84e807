// The emulated sorter's destinations: they fill up, report SCANs, are emptied by an operator's
// button press, and apply the settings the WCS sends.
import type { DestinationInfoDto } from '../model/messages';

interface Destination {
  id: string;
  status: 'Ready' | 'NotReady';
  light: DestinationInfoDto['LightStatus'];
  color: DestinationInfoDto['LightColor'];
  text: string;
  count: number;
  door: DestinationInfoDto['BatchDoorStatus'];
  /** Full, waiting for the operator: NotReady is the sorter's own, not the WCS's. */
  full: boolean;
}

/** What the destinations need from the sorter: its options, its randomness, its timers, its link. */
export interface DestinationsContext {
  count: number;
  /** Items a destination holds before it reports NotReady. */
  capacity: number;
  /** Time an operator takes to empty a full destination (then presses its button), ms. */
  emptyAfterMs: number;
  random: () => number;
  after(ms: number, fn: () => void): void;
  scan(m: DestinationInfoDto): void;
}

export class EmulatedDestinations {
  private readonly all = new Map<string, Destination>();

  constructor(private readonly c: DestinationsContext) {
    for (let i = 1; i <= c.count; i++) {
      const id = `D${String(i).padStart(3, '0')}`;
      this.all.set(id, { id, status: 'Ready', light: 'Off', color: 'Off', text: '', count: 0, door: null, full: false });
    }
  }

  /** A SCAN for every destination (at start). */
  reportAll(): void {
    for (const d of this.all.values()) this.scan(d, 0);
  }

  has(id: string): boolean {
    return this.all.has(id);
  }

  /** Would an item be diverted to `id` now (Ready and not full)? */
  accepts(id: string): boolean {
    const d = this.all.get(id);
    return d !== undefined && d.status === 'Ready' && !d.full;
  }

  /** An item was diverted to `id`: at capacity it turns NotReady until the operator empties it. */
  receive(id: string): void {
    const d = this.all.get(id);
    if (!d) return;
    d.count += 1;
    if (d.count >= this.c.capacity) this.fill(d);
  }

  /** Settings from the WCS (a decoded DSET); an unknown destination is refused (NAK 02). */
  apply(f: Record<string, unknown>): void | { code: number; text: string } {
    const d = this.all.get(String(f.Destination));
    if (!d) return { code: 2, text: `unknown destination ${f.Destination}` };
    // A full destination stays NotReady whatever the WCS says, until it is emptied.
    d.status = d.full ? 'NotReady' : (f.DestinationStatus as Destination['status']);
    d.light = f.LightStatus as Destination['light'];
    d.color = f.LightColor as Destination['color'];
    d.text = String(f.DestinationText);
    if (f.BatchDoorStatus) d.door = f.BatchDoorStatus as Destination['door'];
    this.scan(d, 0);
  }

  private fill(d: Destination): void {
    d.full = true;
    d.status = 'NotReady';
    d.light = 'Flashing';
    d.color = 'RED';
    this.scan(d, 0);
    // Now and then the operator opens the batch door before emptying.
    if (this.c.random() < 0.3) {
      this.c.after(this.c.emptyAfterMs / 2, () => {
        d.door = 'OPENED';
        this.scan(d, 0);
      });
    }
    this.c.after(this.c.emptyAfterMs, () => {
      d.full = false;
      d.count = 0;
      d.status = 'Ready';
      d.light = 'Off';
      d.color = 'Off';
      d.door = d.door ? 'CLOSED' : null;
      this.scan(d, Number(d.id.slice(1)) % 1000); // the destination's button
      d.door = null;
    });
  }

  private scan(d: Destination, button: number): void {
    this.c.scan({
      Type: 'SCAN',
      Destination: d.id,
      DestinationStatus: d.status,
      DestinationText: d.text,
      LightStatus: d.light,
      LightColor: d.color,
      ButtonID: button,
      MessageCode: 211,
      BatchDoorStatus: d.door,
    });
  }
}
