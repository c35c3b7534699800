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
