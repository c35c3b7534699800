import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../../platform/index.ts";
import { simClock } from "../../../test/harness/sim_clock.ts";
import { blockingQueryType, createAgentCache, type FetchOptions } from "./index.ts";

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe("agent cache entries per ACL token", () => {
  test("each token has its own entry, fetched with that token; no token is the reader's default; logs never show a token", async () => {
    const clock = simClock();
    const log = memoryLogger("debug");
    const cache = createAgentCache({ clock, rng: { next: () => 0 }, logger: log, backoffMs: () => 1000 });
    const fetched: (string | undefined)[] = [];
    let fail = false;
    const type = blockingQueryType<{ name: string }, string>({
      name: "test",
      key: (r) => r.name,
      query: async (r, o: FetchOptions) => {
        fetched.push(o.token);
        if (fail) throw new Error("Permission denied");
        // A refresh blocks until the entry is dropped (nothing changes on this fake server).
        if (o.minIndex > 0) await new Promise((resolve) => o.signal.addEventListener("abort", resolve));
        return { value: `${r.name} as ${o.token ?? "default"}`, index: 1 };
      },
    });
    expect((await cache.get(type, { name: "a" }, { token: "secret-1" })).value).toBe("a as secret-1");
    expect((await cache.get(type, { name: "a" }, { token: "secret-2" })).value).toBe("a as secret-2");
    expect((await cache.get(type, { name: "a" })).value).toBe("a as default");
    expect((await cache.get(type, { name: "a" }, { token: "" })).value).toBe("a as default"); // "" is no token
    expect((await cache.get(type, { name: "a" }, { token: "secret-1" })).value).toBe("a as secret-1"); // cached
    expect([...new Set(fetched)]).toEqual(["secret-1", "secret-2", undefined]); // refreshes follow each first fetch

    const seen: string[] = [];
    fail = true;
    cache.watch(type, { name: "b" }, { onUpdate: (r) => seen.push(r.value), onError: () => {} }, { token: "secret-3" });
    await flush();
    clock.advance(1000);
    await flush();
    expect(fetched.filter((t) => t === "secret-3").length).toBeGreaterThanOrEqual(2);
    expect(log.lines.some((l) => l.includes("refreshing a cache entry failed"))).toBe(true);
    expect(log.lines.some((l) => l.includes("secret-"))).toBe(false);
    cache.close();
  });
});
