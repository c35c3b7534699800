/**
 * Test kit for the proxycfg managers: an agent cache whose watches the test answers by type name and
 * request, a fake local agent whose services the test edits, and a microtask flush.
 */
import type { AgentCache, AgentService, CacheType, WatchHandlers, WatchOptions } from "../agent/index.ts";
import type { MeshGatewayCacheTypes, SidecarCacheTypes } from "./cache_watch.ts";

/** Every cache type a manager uses, each a bare `{ name }` the fake cache below answers by. */
export const fakeTypes = Object.fromEntries(
  (["roots", "leaf", "intentions", "configEntry", "chain", "health", "meshGateways", "preparedQuery", "catalogServices", "configEntries", "datacenters"] as const)
    .map((k) => [k, { name: k } as unknown as CacheType<unknown, unknown>]),
) as unknown as SidecarCacheTypes & MeshGatewayCacheTypes;

/** Lets pending promise callbacks run. */
export const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** A cache whose watches the test answers by type name and request. */
export function fakeCache() {
  const live = new Map<number, { type: string; req: unknown; h: WatchHandlers<unknown>; token: string | undefined }>();
  let n = 0;
  const cache: AgentCache = {
    get: () => Promise.reject(new Error("not used")),
    watch<Req, V, S>(type: CacheType<Req, V, S>, req: Req, h: WatchHandlers<V>, options?: WatchOptions) {
      const id = ++n;
      live.set(id, { type: type.name, req, h: h as WatchHandlers<unknown>, token: options?.token });
      return () => void live.delete(id);
    },
    close: () => live.clear(),
  };
  let index = 0;
  const answer = (type: string, value: unknown, match: (req: any) => boolean = () => true) => {
    let hit = 0;
    for (const w of [...live.values()]) if (w.type === type && match(w.req)) (hit++, w.h.onUpdate({ value, index: ++index }));
    return hit;
  };
  const watching = () => [...live.values()].map((w) => `${w.type} ${JSON.stringify(w.req)}`).sort();
  /** Each live watch's type and the token it reads with ("-" for none). */
  const tokens = () => [...live.values()].map((w) => `${w.type} ${w.token ?? "-"}`).sort();
  return { cache, answer, watching, tokens };
}

/** A local agent over `services` (edit it, then call `changed`). */
export function agentWith(services: Record<string, AgentService>) {
  let listener: (() => void) | undefined;
  const agentTokens: Record<string, string> = {};
  return {
    services,
    /** Registration tokens by service ID (edit it, then call `changed`). */
    tokens: agentTokens,
    agent: {
      agentServices: () => ({ ...services }),
      serviceToken: (id: string) => agentTokens[id] ?? "",
      onChange: (fn: () => void) => ((listener = fn), () => (listener = undefined)),
    },
    changed: () => listener?.(),
  };
}
