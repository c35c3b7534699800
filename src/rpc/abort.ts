/**
 * Cancelling state reads: the error a cancelled call rejects with, and a way to stop waiting for a
 * promise the caller can no longer cancel itself.
 */

/**
 * A call given up because its AbortSignal aborted. Its `name` is "AbortError", as the DOM's and the
 * runtime's own abort errors are, so `isAbortError` recognises all of them alike.
 */
export class AbortError extends Error {
  override readonly name = "AbortError";
  constructor(message = "the operation was aborted") {
    super(message);
  }
}

/** Whether `err` is an abort (ours, a DOMException, or any other error named "AbortError"). */
export function isAbortError(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { name?: unknown }).name === "AbortError";
}

/** Throws an AbortError when `signal` has aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError();
}

/**
 * `p` as it settles, or an AbortError rejection as soon as `signal` aborts (at once when it already
 * has). What `p` settles to after the abort is ignored (a rejection is not reported as unhandled), so
 * use this for work that ends on its own or that the signal also cancels. No signal: `p` itself.
 */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(new AbortError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => {});
      reject(new AbortError());
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
