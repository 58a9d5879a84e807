// Test helper: a client connection as the delivery tracker and its connection watch see it.
import { EventEmitter } from 'node:events';

/**
 * A client connection as the tracker sees it: events, end/destroy, and what getpeername would
 * say (`reset`). Node's http server calls destroySoon after the last response of a connection:
 * the prototype's version here records that Node closed it at once.
 */
export class FakeSocket extends EventEmitter {
  ended = 0;
  destroyed = false;
  writable = true;
  closedByNode = false;
  reset = false;
  _handle: { getpeername(out: object): number } | null = { getpeername: () => (this.reset ? -107 : 0) };
  end(): this {
    this.ended += 1;
    this.writable = false;
    return this;
  }
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this._handle = null;
    this.emit('close');
    return this;
  }
  destroySoon(): void {
    this.closedByNode = true;
    this.end();
    this.destroy();
  }
}
