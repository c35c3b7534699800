/**
 * Test kit for the service manager: an agent cache holding config entries the test sets, answering
 * watches (synchronously, on each change) and gets (from what it holds, or with a failure the test sets,
 * or held back until the test releases them), and config entries of the two kinds central config uses.
 * Named *.test.ts so it may use runtime globals; it has no tests itself.
 */
import type { ConfigEntry, ExposeConfig, MeshGatewayMode, ProxyConfigEntry, ServiceConfigEntry } from "../model/index.ts";
import type { AgentCache, CacheType, ConfigEntryRequest, WatchHandlers } from "./cache/index.ts";
import type { CentralConfigSource } from "./service_manager.ts";

const keyOf = (r: ConfigEntryRequest) => `${r.kind}/${r.name}`;

export interface FakeConfigCache {
  readonly source: CentralConfigSource;
  /** Sets (or, with null, deletes) an entry: live watches of it hear the change at once. */
  set(kind: string, name: string, entry: ConfigEntry | null): void;
  /** "kind/name" of every live watch, sorted (one per watch, duplicates kept). */
  watching(): string[];
  /** Gets reject with this while set. */
  failGets: string | undefined;
  /** While true, gets wait until `release()`. */
  holdGets: boolean;
  release(): void;
  /** Gets asked for, as "kind/name", in order. */
  readonly gets: string[];
}

export function fakeConfigCache(): FakeConfigCache {
  const values = new Map<string, ConfigEntry | null>();
  const live = new Map<number, { key: string; h: WatchHandlers<unknown> }>();
  const held: (() => void)[] = [];
  let n = 0;
  let index = 0;
  const type = { name: "config-entry" } as unknown as CacheType<ConfigEntryRequest, ConfigEntry | null>;
  const f: FakeConfigCache = {
    failGets: undefined,
    holdGets: false,
    gets: [],
    source: { cache: undefined as unknown as AgentCache, configEntry: type },
    set(kind, name, entry) {
      const key = `${kind}/${name}`;
      values.set(key, entry);
      index++;
      for (const w of [...live.values()]) if (w.key === key) w.h.onUpdate({ value: entry, index });
    },
    watching: () => [...live.values()].map((w) => w.key).sort(),
    release: () => held.splice(0).forEach((go) => go()),
  };
  const cache: AgentCache = {
    async get<Req, V, S>(_t: CacheType<Req, V, S>, req: Req) {
      const key = keyOf(req as ConfigEntryRequest);
      f.gets.push(key);
      if (f.holdGets) await new Promise<void>((resolve) => held.push(resolve));
      if (f.failGets !== undefined) throw new Error(f.failGets);
      return { value: (values.get(key) ?? null) as V, index: index || 1 };
    },
    watch<Req, V, S>(_t: CacheType<Req, V, S>, req: Req, h: WatchHandlers<V>) {
      const id = ++n;
      const key = keyOf(req as ConfigEntryRequest);
      live.set(id, { key, h: h as WatchHandlers<unknown> });
      // As the real cache: a new watch hears the current value after watch() returns; a missing entry reads as null.
      queueMicrotask(() => {
        if (live.has(id)) h.onUpdate({ value: (values.get(key) ?? null) as V, index: index || 1 });
      });
      return () => void live.delete(id);
    },
    close: () => live.clear(),
  };
  (f.source as { cache: AgentCache }).cache = cache;
  return f;
}

/** A proxy-defaults "global" entry. */
export function proxyDefaults(o: { config?: Record<string, unknown>; expose?: ExposeConfig; mode?: MeshGatewayMode } = {}): ProxyConfigEntry {
  return {
    Kind: "proxy-defaults", Name: "global", ...(o.config ? { Config: o.config } : {}),
    MeshGateway: o.mode ? { Mode: o.mode } : {}, Expose: o.expose ?? {}, CreateIndex: 1, ModifyIndex: 1,
  };
}

/** A service-defaults entry. */
export function serviceDefaults(name: string, o: { protocol?: string; expose?: ExposeConfig; mode?: MeshGatewayMode } = {}): ServiceConfigEntry {
  return {
    Kind: "service-defaults", Name: name, Protocol: o.protocol ?? "", MeshGateway: o.mode ? { Mode: o.mode } : {},
    Expose: o.expose ?? {}, CreateIndex: 1, ModifyIndex: 1,
  };
}
