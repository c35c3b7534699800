/**
 * What one client is subscribed to for one type on one stream, with the legacy wildcard rules of
 * Envoy's xDS protocol document ("How the client specifies what resources to return"):
 * - an explicit `"*"` subscribes to everything (any type);
 * - for Listener and Cluster, a client that has never named a resource for the type on this stream
 *   is treated as subscribed to `"*"`; once it names anything (including `"*"`), an empty list means
 *   no subscription at all.
 */
export class Subscription {
  /** Subscribed to every resource of the type. */
  wildcard = false;
  /** Explicitly named resources (never contains "*"). */
  readonly names = new Set<string>();
  /** Counts changes: equal revisions mean an equal subscription (for memoizing what it selects). */
  revision = 0;
  private everNamed = false;

  /** True if the resource `name` is wanted. */
  wants(name: string): boolean {
    return this.wildcard || this.names.has(name);
  }

  /**
   * SotW: the request's `resource_names` replace the subscription. `legacy` says whether the type
   * has the legacy wildcard. Returns true if the subscription changed.
   */
  replace(resourceNames: readonly string[], legacy: boolean): boolean {
    let wildcard = false;
    const names = new Set<string>();
    if (resourceNames.length === 0 && !this.everNamed && legacy) {
      wildcard = true;
    } else {
      if (resourceNames.length > 0) this.everNamed = true;
      for (const n of resourceNames) {
        if (n === "*") wildcard = true;
        else names.add(n);
      }
    }
    // Most requests are ACKs that repeat the subscription: compare as sets, without sorting.
    let same = wildcard === this.wildcard && names.size === this.names.size;
    if (same) for (const n of names) if (!this.names.has(n)) same = false;
    if (same) return false;
    this.wildcard = wildcard;
    this.names.clear();
    for (const n of names) this.names.add(n);
    this.revision++;
    return true;
  }

  /**
   * Delta: applies one request's subscribe and unsubscribe lists (unsubscribe wins for a name in
   * both, as Envoy's client does). `first` marks the stream's first request for the type, where empty
   * lists mean the legacy wildcard for types that have one.
   */
  update(subscribe: readonly string[], unsubscribe: readonly string[], first: boolean, legacy: boolean): void {
    if (subscribe.length > 0 || unsubscribe.length > 0 || first) this.revision++;
    if (first && subscribe.length === 0 && unsubscribe.length === 0 && legacy) this.wildcard = true;
    for (const n of subscribe) {
      if (n === "*") this.wildcard = true;
      else this.names.add(n);
    }
    for (const n of unsubscribe) {
      if (n === "*") this.wildcard = false;
      else this.names.delete(n);
    }
  }

  /** A printable summary for logs: `*` and/or the sorted names. */
  describe(): string {
    return this.key();
  }

  private key(): string {
    return [...(this.wildcard ? ["*"] : []), ...[...this.names].sort()].join(",");
  }
}
