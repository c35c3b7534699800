import { describe, expect, test } from "bun:test";
import type { StateAccess } from "../http/index.ts";
import { dnsCatalogOver } from "./dns.ts";

/** A state access whose reads answer `lastContactMs` for stale reads, 0 otherwise, and record the consistency asked. */
function fakeState(lastContactMs: number) {
  const asked: string[] = [];
  const state = {
    async read(_q: unknown, options: { consistency: string }) {
      asked.push(options.consistency);
      return { value: [], meta: { index: 1, knownLeader: true, lastContactMs: options.consistency === "stale" ? lastContactMs : 0 } };
    },
    async write() {
      throw new Error("no writes");
    },
  } as unknown as StateAccess;
  return { state, asked };
}

const agent = { datacenter: "dc1", node: "n1" };
const none = async () => [];

describe("DNS reads: allow_stale and max_stale", () => {
  test("stale reads by default; a read staler than max_stale is redone with the leader; over 5 s counts as stale", async () => {
    const fresh = fakeState(100);
    let stale = 0;
    await dnsCatalogOver(fresh.state, { allowStale: true, maxStaleMs: 60_000 }, agent, none, () => stale++).serviceNodes("web", undefined, false, "dc1");
    expect([fresh.asked, stale]).toEqual([["stale"], 0]);

    const lagging = fakeState(10_000);
    await dnsCatalogOver(lagging.state, { allowStale: true, maxStaleMs: 60_000 }, agent, none, () => stale++).nodes("dc1");
    expect([lagging.asked, stale]).toEqual([["stale"], 1]);

    const lost = fakeState(120_000);
    await dnsCatalogOver(lost.state, { allowStale: true, maxStaleMs: 60_000 }, agent, none, () => stale++).nodeServices("x", "dc1");
    expect(lost.asked).toEqual(["stale", "default"]);
  });

  test("allow_stale false: every read goes to the leader", async () => {
    const s = fakeState(0);
    await dnsCatalogOver(s.state, { allowStale: false, maxStaleMs: 60_000 }, agent, none).serviceNodes("web", "v1", true, "dc2");
    expect(s.asked).toEqual(["default"]);
  });
});
