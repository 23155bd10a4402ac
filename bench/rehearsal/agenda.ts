/** The driver's time-ordered follow-ups (retries, repeats, polls): a binary min-heap on (due, seq). */
interface Task {
  due: number;
  seq: number;
  run: () => Promise<void>;
}

export class Agenda {
  private readonly items: Task[] = [];
  private seq = 0;
  get size() {
    return this.items.length;
  }
  peek(): Task | undefined {
    return this.items[0];
  }
  push(due: number, run: () => Promise<void>): void {
    const items = this.items;
    items.push({ due, seq: this.seq++, run });
    for (let i = items.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!less(items[i]!, items[p]!)) break;
      [items[i], items[p]] = [items[p]!, items[i]!];
      i = p;
    }
  }
  pop(): Task | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && less(items[l]!, items[m]!)) m = l;
        if (r < items.length && less(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}
const less = (a: Task, b: Task) => a.due < b.due || (a.due === b.due && a.seq < b.seq);
