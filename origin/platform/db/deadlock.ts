/** Lifecycle transactions touch hot rows (stock, orders) from several processes: a deadlock victim retries. */
export function isDeadlock(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT';
}

export async function retryOnDeadlock<T>(retries: number, work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isDeadlock(err) || attempt >= retries) throw err;
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20 * (attempt + 1)));
    }
  }
}
