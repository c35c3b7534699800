/**
 * Intentions matching a destination as a cache type (Consul's agent/cache-types/intention_match.go,
 * `Intention.Match` by destination): a blocking read of every intention, narrowed to those whose
 * destination is the service or a wildcard covering it, highest precedence first.
 */
import { matchIntentions } from "../../connect/index.ts";
import type { Intention } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType } from "./types.ts";

/** The destination to match (one IntentionMatchEntry of type "destination"). */
export interface IntentionMatchRequest {
  readonly datacenter?: string;
  readonly namespace?: string;
  readonly service: string;
}

/** The intention-match type over `reader`. */
export function intentionMatchType(reader: StateReader): CacheType<IntentionMatchRequest, readonly Intention[]> {
  return blockingQueryType({
    name: "intention-match",
    key: (r) => JSON.stringify([r.datacenter ?? "", r.namespace || "default", r.service]),
    async query(r, options) {
      const res = await blockingRead(reader, { type: "intention-list" }, r.datacenter, options);
      const [matched] = matchIntentions(res.value, { type: "destination", entries: [{ namespace: r.namespace || "default", name: r.service }] });
      return { index: res.index, value: matched ?? [] };
    },
  });
}
