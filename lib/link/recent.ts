// A fixed-size window of the latest items (the dashboard's last telegrams and decisions).

/** The last `size` items added; `list()` gives them oldest first. One array write per item. */
export class Recent<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(private readonly size: number) {}

  add(item: T): void {
    if (this.items.length < this.size) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.size;
  }

  /** Oldest first. */
  list(): T[] {
    return this.items.length < this.size ? [...this.items] : [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }
}
