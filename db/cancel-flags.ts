// The commands' cancel flags (`Cancel` in db/writer-protocol.ts): one Int32 each, in slabs of
// shared memory that cross to the writer thread once, at their start. A SharedArrayBuffer of its
// own for each command was allocated, sent and collected once for every POST: about 5% of the
// service's CPU an item at 50 items/s (docs/performance.md).
import { Cancel } from './writer-protocol';

/** Flags in one slab of shared memory. */
export const FLAGS_PER_SLAB = 256;

/** A slot's flag: a view of its Int32 in the slabs (as both threads know them). */
export function flagIn(slabs: readonly SharedArrayBuffer[], slot: number): Int32Array {
  const slab = slabs[Math.floor(slot / FLAGS_PER_SLAB)];
  if (!slab) throw new Error(`cancel flag ${slot}: its slab never reached this thread`);
  return new Int32Array(slab, (slot % FLAGS_PER_SLAB) * 4, 1);
}

/**
 * The main thread's side: a slot for each command that may be cancelled, taken back once the
 * writer thread will not look at it again; a new slab when every slot is in use, announced to the
 * writer before any command that uses it (the announcement and the commands share one port,
 * which keeps their order).
 */
export class FlagSlots {
  private readonly slabs: SharedArrayBuffer[] = [];
  private readonly free: number[] = [];

  constructor(private readonly announce: (index: number, slab: SharedArrayBuffer) => void) {}

  /** A free slot, its flag set to Queued. */
  take(): number {
    if (this.free.length === 0) this.grow();
    const slot = this.free.pop() ?? -1;
    Atomics.store(this.flag(slot), 0, Cancel.Queued);
    return slot;
  }

  /** The flag of a slot taken. */
  flag(slot: number): Int32Array {
    return flagIn(this.slabs, slot);
  }

  /** The writer will not look at this slot's flag again: it may serve another command. */
  release(slot: number): void {
    this.free.push(slot);
  }

  /** Slots taken and not released. */
  get inUse(): number {
    return this.slabs.length * FLAGS_PER_SLAB - this.free.length;
  }

  private grow(): void {
    const index = this.slabs.length;
    const slab = new SharedArrayBuffer(FLAGS_PER_SLAB * Int32Array.BYTES_PER_ELEMENT);
    this.slabs.push(slab);
    // Lowest first: pop() takes from the end.
    for (let i = FLAGS_PER_SLAB - 1; i >= 0; i--) this.free.push(index * FLAGS_PER_SLAB + i);
    this.announce(index, slab);
  }
}
