/**
 * Makes WebCrypto deterministic for simulated-clock tests. `crypto.subtle` runs AES-GCM on a thread
 * pool, so its promises settle after an unpredictable number of event-loop turns: a simulation that
 * advances its clock meanwhile would see packets sealed "late", in varying order. While installed,
 * `serialCrypto()` runs `encrypt`, `decrypt` and `importKey` one at a time in call order (so they
 * settle in call order) and `idle()` resolves once none is pending, so a test can let every started
 * crypto operation finish before it moves simulated time on. Call `restore()` when done.
 */
export interface SerialCrypto {
  /** Operations started and not yet settled. */
  pending(): number;
  /** Yields to the event loop until no operation is pending (and their continuations ran). */
  idle(): Promise<void>;
  /** Puts the runtime's methods back. */
  restore(): void;
}

const METHODS = ["encrypt", "decrypt", "importKey"] as const;

export function serialCrypto(): SerialCrypto {
  const subtle = crypto.subtle as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;
  for (const m of METHODS) {
    const original = subtle[m]!.bind(crypto.subtle);
    subtle[m] = (...args: unknown[]) => {
      pending++;
      const run = queue.then(() => original(...args));
      queue = run.catch(() => {});
      return run.finally(() => void pending--);
    };
  }
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    pending: () => pending,
    async idle() {
      // Two quiet turns in a row: continuations of the last operation may start another one.
      for (let quiet = 0; quiet < 2;) {
        await turn();
        quiet = pending === 0 ? quiet + 1 : 0;
      }
    },
    restore() {
      for (const m of METHODS) delete subtle[m];
    },
  };
}
