/**
 * The watch bookkeeping the proxycfg state machines share: bring the held watches in line with the
 * wanted ones, as watch/cancel commands. Pure; mutates only the maps it is given.
 */

/** A watch held by a machine: its request and the request's JSON (two requests are the same watch when equal). */
export interface HeldWatch<R> {
  readonly key: string;
  readonly request: R;
}

/** A command of a machine: start watch `watchId` for `request`, or cancel it. */
export type Command<R> = { readonly op: "watch"; readonly watchId: string; readonly request: R } | { readonly op: "cancel"; readonly watchId: string };

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Cancels every held watch that is no longer wanted or whose request changed (dropping its value), then
 * starts every wanted watch not held, in ID order, and repeats until `desired()` is stable (it may depend
 * on the values, so a cancel can cascade). At most `passes` rounds. Returns the commands, cancels of a
 * round before its starts, and whether any value was dropped.
 */
export function reconcileWatches<R>(
  held: Map<string, HeldWatch<R>>,
  values: Map<string, unknown>,
  desired: () => ReadonlyMap<string, R>,
  passes = 4,
): { readonly commands: Command<R>[]; readonly dropped: boolean } {
  const commands: Command<R>[] = [];
  let dropped = false;
  for (let pass = 0; pass < passes; pass++) {
    const want = desired();
    const cancels: Command<R>[] = [];
    const starts: Command<R>[] = [];
    for (const [id, h] of [...held].sort(([a], [b]) => byId(a, b))) {
      const w = want.get(id);
      if (w !== undefined && JSON.stringify(w) === h.key) continue;
      cancels.push({ op: "cancel", watchId: id });
      held.delete(id);
      if (values.delete(id)) dropped = true;
    }
    for (const id of [...want.keys()].sort(byId)) {
      if (held.has(id)) continue;
      const request = want.get(id)!;
      held.set(id, { key: JSON.stringify(request), request });
      starts.push({ op: "watch", watchId: id, request });
    }
    if (cancels.length === 0 && starts.length === 0) break;
    commands.push(...cancels, ...starts);
  }
  return { commands, dropped };
}

/**
 * What every proxycfg state machine shares: the watches held with their values, the cached snapshot,
 * start/close/watches/snapshot. A machine states which watches it wants now (`desired`, which may read
 * the values and the input) and how a snapshot is made of them (`build`, undefined while not valid);
 * its `handle` stores values through `accept` and calls `reconcile` when the wanted set may have changed.
 */
export abstract class WatchMachine<R extends { readonly kind: string }, V, S, I> {
  /** Watches held: ID -> request and its JSON. */
  protected readonly held = new Map<string, HeldWatch<R>>();
  protected readonly values = new Map<string, V>();
  protected closed = false;
  private cached: S | undefined;
  private dirty = true;

  /** `input`: what the machine is for (a registration), replaced through {@link replaceInput}. */
  constructor(protected input: I) {}

  /** Every watch wanted now, by ID. */
  protected abstract desired(): ReadonlyMap<string, R>;
  /** The snapshot of the values held, or undefined while it would not be valid. */
  protected abstract build(): S | undefined;

  /** The first watches. Call once. */
  start(): Command<R>[] {
    return this.reconcile();
  }

  /** Cancels every watch; later events are ignored. */
  close(): Command<R>[] {
    if (this.closed) return [];
    this.closed = true;
    const out: Command<R>[] = [...this.held.keys()].sort().map((watchId) => ({ op: "cancel", watchId }));
    this.held.clear();
    this.values.clear();
    this.cached = undefined;
    return out;
  }

  /** The watches held now, by ID (sorted). */
  watches(): ReadonlyMap<string, R> {
    return new Map([...this.held.keys()].sort().map((id) => [id, this.held.get(id)!.request]));
  }

  /** The current snapshot when valid, else undefined. The same object until something changes. */
  snapshot(): S | undefined {
    if (!this.dirty) return this.cached;
    this.dirty = false;
    this.cached = this.closed ? undefined : this.build();
    return this.cached;
  }

  /**
   * Stores a watch's new value; false (nothing changed) when the machine is closed, the watch is not held
   * as a request of `kind` (a stale update), or `skipEqual` and the value equals the one held.
   */
  protected accept(watchId: string, kind: string, value: V, skipEqual = false): boolean {
    if (this.closed) return false;
    const held = this.held.get(watchId);
    if (!held || held.request.kind !== kind) return false;
    if (skipEqual && this.values.has(watchId) && JSON.stringify(this.values.get(watchId)) === JSON.stringify(value)) return false;
    this.values.set(watchId, value);
    this.dirty = true;
    return true;
  }

  /** Takes a new input (a changed registration); an equal one changes nothing. */
  protected replaceInput(next: I): Command<R>[] {
    if (this.closed || JSON.stringify(next) === JSON.stringify(this.input)) return [];
    this.input = next;
    this.dirty = true;
    return this.reconcile();
  }

  /** The value of watch `id` if it is held as a request of `kind`. */
  protected valueOfKind<T extends V>(id: string, kind: R["kind"]): T | undefined {
    const h = this.held.get(id);
    return h && h.request.kind === kind && this.values.has(id) ? (this.values.get(id) as T) : undefined;
  }

  /** The value of watch `id` if it is held with exactly `request`. */
  protected valueOfRequest<T extends V>(id: string, request: R): T | undefined {
    return this.held.get(id)?.key === JSON.stringify(request) && this.values.has(id) ? (this.values.get(id) as T) : undefined;
  }

  /** Cancels what is no longer wanted (dropping its value), then starts what is new, until stable. */
  protected reconcile(): Command<R>[] {
    const { commands, dropped } = reconcileWatches(this.held, this.values, () => this.desired());
    if (dropped) this.dirty = true;
    return commands;
  }
}
