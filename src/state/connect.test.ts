import { describe, expect, test } from "bun:test";
import { compareIntentions, intentionString } from "../connect/intentions/index.ts";
import type { StateCommand } from "./commands.ts";
import { caConfig, intention, resolver, root, serviceDefaults, setEntry, setRoots, upsert } from "./connect_fixtures.test.ts";
import { harness, ok, ws } from "./fixtures.test.ts";
import { caRoots, compareStoredIntentions, configEntryGet, configEntryList, intentionGet, intentionList } from "./queries_connect.ts";
import { WatchSet, waitFor, type WaitOutcome } from "./watch.ts";

const del = (kind: string, name: string): StateCommand => ({ type: "config-entry", op: "delete", kind, name });
const cas = (entry: ReturnType<typeof serviceDefaults>, index: number): StateCommand => ({ type: "config-entry", op: "cas", entry, index });

describe("config-entry commands", () => {
  test("set keeps CreateIndex on update and sets ModifyIndex to the raft index", () => {
    const h = harness();
    expect(h.apply(setEntry(serviceDefaults("web")))).toEqual(ok);
    expect(h.apply(setEntry(serviceDefaults("WEB", "grpc")))).toEqual(ok);
    const got = configEntryGet(h.store, ws(), "Service-Defaults", "web");
    expect(got.value).toMatchObject({ Name: "WEB", Protocol: "grpc", CreateIndex: 1, ModifyIndex: 2 });
    expect(got.index).toBe(2);
    expect(configEntryList(h.store, ws()).value).toHaveLength(1);
  });

  test("cas: 0 only if absent, otherwise the stored ModifyIndex must match", () => {
    const h = harness();
    expect(h.apply(cas(serviceDefaults("web"), 5))).toEqual({ type: "cas", ok: false });
    expect(h.apply(cas(serviceDefaults("web"), 0))).toEqual({ type: "cas", ok: true });
    expect(h.apply(cas(serviceDefaults("web", "tcp"), 0))).toEqual({ type: "cas", ok: false });
    expect(h.apply(cas(serviceDefaults("web", "tcp"), 1))).toEqual({ type: "cas", ok: false });
    expect(h.apply(cas(serviceDefaults("web", "tcp"), 2))).toEqual({ type: "cas", ok: true });
    expect(configEntryGet(h.store, ws(), "service-defaults", "web").value).toMatchObject({ Protocol: "tcp", CreateIndex: 2, ModifyIndex: 5 });
    expect(configEntryGet(h.store, ws(), "service-defaults", "web").index).toBe(5);
  });

  test("delete removes case-insensitively; a missing entry is a no-op that bumps nothing", () => {
    const h = harness();
    h.apply(setEntry(serviceDefaults("web")));
    expect(h.apply(del("service-defaults", "nope"))).toEqual(ok);
    expect(configEntryList(h.store, ws()).index).toBe(1);
    expect(h.apply(del("SERVICE-DEFAULTS", "Web"))).toEqual(ok);
    expect(configEntryGet(h.store, ws(), "service-defaults", "web")).toEqual({ index: 3, value: null });
  });

  test("list sorts by kind then name, filters by kind, and reports the table index", () => {
    const h = harness();
    h.apply(setEntry(serviceDefaults("b")));
    h.apply(setEntry(resolver("z")));
    h.apply(setEntry(serviceDefaults("A")));
    h.apply(setEntry(resolver("a")));
    const all = configEntryList(h.store, ws());
    expect(all.value.map((e) => `${e.Kind}/${e.Name}`)).toEqual(["service-defaults/A", "service-defaults/b", "service-resolver/a", "service-resolver/z"]);
    expect(all.index).toBe(4);
    expect(configEntryList(h.store, ws(), "Service-Resolver").value.map((e) => e.Name)).toEqual(["a", "z"]);
    expect(configEntryList(h.store, ws(), "service-router")).toEqual({ index: 4, value: [] });
    expect(configEntryList(h.store, ws(), "service")).toEqual({ index: 4, value: [] });
  });
});

describe("intention commands", () => {
  test("upsert keeps CreateIndex and CreatedAt, forces Meta non-null; delete is idempotent", () => {
    const h = harness();
    expect(h.apply(upsert(intention("ID-1", "web", "db")))).toEqual(ok);
    expect(h.apply(upsert(intention("id-1", "web", "db", { Action: "deny", CreatedAt: "later", Meta: null as never })))).toEqual(ok);
    const got = intentionGet(h.store, ws(), "Id-1");
    expect(got.value).toMatchObject({ Action: "deny", CreatedAt: "2020-01-01T00:00:00Z", Meta: {}, CreateIndex: 1, ModifyIndex: 2 });
    expect(got.index).toBe(2);
    expect(h.apply({ type: "intention", op: "delete", id: "missing" })).toEqual(ok);
    expect(intentionList(h.store, ws()).index).toBe(2);
    expect(h.apply({ type: "intention", op: "delete", id: "ID-1" })).toEqual(ok);
    expect(intentionGet(h.store, ws(), "id-1")).toEqual({ index: 4, value: null });
  });

  test("a second intention with the same source and destination (any case) is rejected with Consul's message", () => {
    const h = harness();
    const first = intention("a", "web", "db");
    h.apply(upsert(first));
    const r = h.apply(upsert(intention("b", "WEB", "Db", { Action: "deny" })));
    const stored = intentionGet(h.store, ws(), "a").value!;
    expect(r).toEqual({ type: "error", error: `duplicate intention found: ${intentionString(stored)}` });
    expect(r).toEqual({ type: "error", error: "duplicate intention found: ALLOW default/web => default/db (ID: a, Precedence: 9)" });
    expect(intentionList(h.store, ws())).toEqual({ index: 1, value: [stored] });
    // Moving an intention to a free tuple frees its old one.
    expect(h.apply(upsert(intention("a", "web", "cache")))).toEqual(ok);
    expect(h.apply(upsert(intention("b", "web", "db")))).toEqual(ok);
  });

  test("list is in Consul's precedence order, the same as connect's compareIntentions", () => {
    const h = harness();
    const xs = [
      intention("1", "*", "*"), intention("2", "web", "*"), intention("3", "web", "db"), intention("4", "*", "db"),
      intention("5", "api", "db"), intention("6", "Web", "cache"), intention("7", "api", "*"),
      intention("8", "x", "y", { SourceNS: "*", SourceName: "*", Precedence: 7 }),
    ];
    for (const x of xs) expect(h.apply(upsert(x))).toEqual(ok);
    const got = intentionList(h.store, ws());
    expect(got.index).toBe(xs.length);
    // Go byte order: "Web" < "api" < "web".
    expect(got.value.map((x) => x.ID)).toEqual(["6", "5", "3", "4", "8", "7", "2", "1"]);
    expect([...got.value].sort(compareIntentions)).toEqual([...got.value]);
    expect([...got.value].sort(compareStoredIntentions)).toEqual([...got.value]);
  });
});

describe("ca commands", () => {
  test("set-config keeps CreateIndex and an empty ClusterID keeps the stored one", () => {
    const h = harness();
    expect(h.apply({ type: "ca", op: "set-config", config: caConfig() })).toEqual(ok);
    expect(h.apply({ type: "ca", op: "set-config", config: { ...caConfig(""), Config: { ...caConfig().Config, LeafCertTTL: "1h" } } })).toEqual(ok);
    const got = caRoots(h.store, ws());
    expect(got.value.config).toMatchObject({ ClusterID: caConfig().ClusterID, CreateIndex: 1, ModifyIndex: 2, Config: { LeafCertTTL: "1h" } });
    expect(got).toMatchObject({ index: 2, value: { roots: [] } });
  });

  test("set-roots is a CAS on the roots table index, replaces every root and keeps CreateIndex of kept roots", () => {
    const h = harness();
    expect(h.apply(setRoots([root("r1", true)], 3))).toEqual({ type: "cas", ok: false });
    expect(h.apply(setRoots([root("r1", true)], 0, caConfig("c", "KEY")))).toEqual({ type: "cas", ok: true });
    let got = caRoots(h.store, ws());
    expect(got.index).toBe(2);
    expect(got.value.roots).toEqual([{ ...root("r1", true), CreateIndex: 2, ModifyIndex: 2 }]);
    expect(got.value.config).toMatchObject({ ClusterID: "c", Config: { PrivateKey: "KEY" }, CreateIndex: 2, ModifyIndex: 2 });
    expect(h.apply(setRoots([root("r2", true), root("r1", false)], 0))).toEqual({ type: "cas", ok: false });
    expect(h.apply(setRoots([root("r2", true), root("r1", false)], 2))).toEqual({ type: "cas", ok: true });
    got = caRoots(h.store, ws());
    expect(got.value.roots.map((r) => [r.ID, r.Active, r.CreateIndex, r.ModifyIndex])).toEqual([["r1", false, 2, 4], ["r2", true, 4, 4]]);
    expect(got.value.config?.ModifyIndex).toBe(2);
    expect(h.apply(setRoots([root("r3", true)], 4))).toEqual({ type: "cas", ok: true });
    expect(caRoots(h.store, ws()).value.roots.map((r) => r.ID)).toEqual(["r3"]);
  });

  test("set-roots needs exactly one active root with an ID, and an error changes nothing", () => {
    const h = harness();
    h.apply(setRoots([root("r1", true)], 0));
    const before = h.store.snapshot();
    for (const roots of [[], [root("a", false)], [root("a", true), root("b", true)]]) {
      expect(h.apply(setRoots(roots, 1))).toEqual({ type: "error", error: "there must be exactly one active CA" });
    }
    expect(h.apply(setRoots([root("r2", true), root("", false)], 1, caConfig()))).toEqual({ type: "error", error: "Missing CA Root ID" });
    expect(JSON.parse(new TextDecoder().decode(h.store.snapshot())).caRoots).toEqual(JSON.parse(new TextDecoder().decode(before)).caRoots);
    expect(caRoots(h.store, ws())).toMatchObject({ index: 1, value: { config: null } });
  });
});

async function tick(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function watch(h: ReturnType<typeof harness>, read: (w: WatchSet) => unknown) {
  const w = new WatchSet();
  read(w);
  let outcome: WaitOutcome | undefined;
  void waitFor(w, { clock: h.clock, timeoutMs: 60_000 }).then((o) => (outcome = o));
  return async () => {
    await tick();
    return outcome;
  };
}

describe("watch precision", () => {
  test("each Connect query wakes on its own table only", async () => {
    const h = harness();
    h.apply(setEntry(serviceDefaults("web")));
    h.apply(upsert(intention("i1", "web", "db")));
    const entries = watch(h, (w) => configEntryList(h.store, w));
    const oneEntry = watch(h, (w) => configEntryGet(h.store, w, "service-defaults", "web"));
    const intentions = watch(h, (w) => intentionList(h.store, w));
    const oneIntention = watch(h, (w) => intentionGet(h.store, w, "i1"));
    const ca = watch(h, (w) => caRoots(h.store, w));

    h.apply(setEntry(serviceDefaults("other")));
    h.apply(del("service-defaults", "missing"));
    expect(await entries()).toBe("changed");
    expect([await oneEntry(), await intentions(), await oneIntention(), await ca()]).toEqual([undefined, undefined, undefined, undefined]);

    h.apply(upsert(intention("i2", "api", "db")));
    h.apply({ type: "kv", op: "set", entry: { Key: "k", Value: null } });
    expect(await intentions()).toBe("changed");
    expect([await oneEntry(), await oneIntention(), await ca()]).toEqual([undefined, undefined, undefined]);

    h.apply({ type: "ca", op: "set-config", config: caConfig() });
    expect(await ca()).toBe("changed");
    expect([await oneEntry(), await oneIntention()]).toEqual([undefined, undefined]);

    h.apply(setEntry(serviceDefaults("WEB", "grpc")));
    h.apply({ type: "intention", op: "delete", id: "I1" });
    expect([await oneEntry(), await oneIntention()]).toEqual(["changed", "changed"]);
  });

  test("a failed cas and a rejected duplicate wake nobody", async () => {
    const h = harness();
    h.apply(upsert(intention("i1", "web", "db")));
    h.apply(setRoots([root("r1", true)], 0));
    const intentions = watch(h, (w) => intentionList(h.store, w));
    const ca = watch(h, (w) => caRoots(h.store, w));
    expect(h.apply(upsert(intention("i2", "web", "db"))).type).toBe("error");
    expect(h.apply(setRoots([root("r2", true)], 0))).toEqual({ type: "cas", ok: false });
    expect([await intentions(), await ca()]).toEqual([undefined, undefined]);
  });
});
