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
    const before = this.key();
    this.names.clear();
    if (resourceNames.length === 0 && !this.everNamed && legacy) {
      this.wildcard = true;
    } else {
      if (resourceNames.length > 0) this.everNamed = true;
      this.wildcard = false;
      for (const n of resourceNames) {
        if (n === "*") this.wildcard = true;
        else this.names.add(n);
      }
    }
    return this.key() !== before;
  }

  /**
   * Delta: applies one request's subscribe and unsubscribe lists (unsubscribe wins for a name in
   * both, as Envoy's client does). `first` marks the stream's first request for the type, where empty
   * lists mean the legacy wildcard for types that have one.
   */
  update(subscribe: readonly string[], unsubscribe: readonly string[], first: boolean, legacy: boolean): void {
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
