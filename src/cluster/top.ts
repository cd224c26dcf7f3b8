// The first N of a stream in a given order, in memory for N items only (a binary heap whose root is
// the last of the kept ones): the worst nodes of a fleet, the newest PipelineRuns of a cluster.

export class TopN<T> {
  private readonly heap: T[] = [];
  private readonly capacity: number;
  /** Negative when `a` comes before `b`. */
  private readonly order: (a: T, b: T) => number;

  constructor(capacity: number, order: (a: T, b: T) => number) {
    this.capacity = Math.max(0, capacity);
    this.order = order;
  }

  get size(): number {
    return this.heap.length;
  }

  /** Offers an item; returns the one that is no longer among the first N (this one or an evicted one), if any. */
  offer(item: T): T | undefined {
    if (this.heap.length < this.capacity) {
      this.heap.push(item);
      this.siftUp(this.heap.length - 1);
      return undefined;
    }
    const last = this.heap[0];
    if (last === undefined || this.order(item, last) >= 0) return item;
    this.heap[0] = item;
    this.siftDown(0);
    return last;
  }

  /** The kept items, first first. */
  sorted(): T[] {
    return [...this.heap].sort(this.order);
  }

  // The heap keeps the item that comes last at its root.
  private after(i: number, j: number): boolean {
    return this.order(this.heap[i] as T, this.heap[j] as T) > 0;
  }

  private swap(i: number, j: number): void {
    const t = this.heap[i] as T;
    this.heap[i] = this.heap[j] as T;
    this.heap[j] = t;
  }

  private siftUp(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.after(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(i: number): void {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let top = i;
      if (left < this.heap.length && this.after(left, top)) top = left;
      if (right < this.heap.length && this.after(right, top)) top = right;
      if (top === i) return;
      this.swap(i, top);
      i = top;
    }
  }
}
