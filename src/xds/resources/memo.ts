/**
 * Memoization of resource builders by input identity. Snapshots are readonly values whose big parts
 * (discovery chains, target health arrays, CA roots, the leaf, intentions) are the agent cache's objects,
 * shared by every proxy that watches them and kept as long as they do not change. A builder whose output
 * depends only on such objects plus a few plain values (the `key` string) returns the same message object
 * for every proxy and every snapshot with those inputs, so the xDS cache (../cache/cache.ts) serializes
 * and hashes it once.
 *
 * Contract for callers: `objects` and `key` together must determine the built value completely, and
 * neither the inputs nor the returned value may be mutated afterwards (the value is shared).
 * Entries live while every object of their `objects` does (WeakMaps); each innermost map also keeps at
 * most `limit` keys, dropping the oldest, so plain values that churn under long-lived objects stay bounded.
 */

interface MemoNode<R> {
  readonly next: WeakMap<object, MemoNode<R>>;
  values?: Map<string, R>;
}

/** A memo table for one builder. */
export interface Memo<R> {
  /** The value built for exactly these objects (by identity, in order) and key; built on first use. */
  get(objects: readonly object[], key: string, build: () => R): R;
}

/** Innermost keys kept per object combination unless told otherwise. */
export const DEFAULT_MEMO_LIMIT = 10_000;

/** Creates an empty memo table. */
export function createMemo<R>(limit = DEFAULT_MEMO_LIMIT): Memo<R> {
  const root: MemoNode<R> = { next: new WeakMap() };
  return {
    get(objects, key, build) {
      let node = root;
      for (const o of objects) {
        let child = node.next.get(o);
        if (!child) node.next.set(o, (child = { next: new WeakMap() }));
        node = child;
      }
      const values = (node.values ??= new Map());
      if (values.has(key)) return values.get(key)!;
      const value = build();
      if (values.size >= limit) values.delete(values.keys().next().value!);
      values.set(key, value);
      return value;
    },
  };
}
