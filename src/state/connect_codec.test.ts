import { describe, expect, test } from "bun:test";
import { decodeCommand, encodeCommand } from "./codec.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { caConfig, intention, resolver, root, serviceDefaults, setEntry, setRoots, upsert } from "./connect_fixtures.test.ts";
import { harness, register, utf8, ws } from "./fixtures.test.ts";
import { caRoots, configEntryList, intentionList } from "./queries_connect.ts";
import { kvList } from "./queries_kv.ts";

const router: StateCommand = setEntry({
  Kind: "service-router", Name: "web", CreateIndex: 0, ModifyIndex: 0,
  Routes: [{ Match: { HTTP: { PathPrefix: "/a", Methods: ["GET"] } }, Destination: { Service: "a", RequestTimeout: "5s" } }],
});
const commands: StateCommand[] = [
  setEntry(serviceDefaults("web")),
  setEntry({ Kind: "proxy-defaults", Name: "global", Config: { protocol: "http", n: [1, { x: null }] }, MeshGateway: { Mode: "local" }, Expose: { Checks: true, Paths: [{ Path: "/h", LocalPathPort: 8080 }] }, Meta: { a: "b" }, CreateIndex: 0, ModifyIndex: 0 }),
  router,
  setEntry({ Kind: "service-splitter", Name: "web", Splits: [{ Weight: 90.5, Service: "a" }, { Weight: 9.5 }], CreateIndex: 0, ModifyIndex: 0 }),
  setEntry(resolver("web", { DefaultSubset: "v1", Subsets: { v1: { Filter: "Service.Meta.v == 1" } }, Failover: { "*": { Datacenters: ["dc2"] } } })),
  { type: "config-entry", op: "cas", entry: serviceDefaults("web"), index: 0 },
  { type: "config-entry", op: "delete", kind: "service-defaults", name: "web" },
  upsert(intention("i1", "web", "db", { Meta: { k: "v" } })),
  { type: "intention", op: "delete", id: "i1" },
  { type: "ca", op: "set-config", config: caConfig("c", "-----BEGIN EC PRIVATE KEY-----") },
  setRoots([root("r1", true), root("r0", false)], 0),
  setRoots([root("r1", true)], 7, caConfig()),
];

describe("connect command codec", () => {
  test.each(commands.map((c, i) => [`${c.type} #${i}`, c] as const))("round-trips %s", (_: string, cmd: StateCommand) => {
    expect(decodeCommand(encodeCommand(cmd))).toEqual(cmd as never);
  });

  const ixn = JSON.stringify(intention("i", "a", "b"));
  const sd = JSON.stringify(serviceDefaults("web"));
  const r = JSON.stringify(root("r", true));
  const cfg = JSON.stringify(caConfig());
  test.each([
    ["a config-entry with a bad op", '{"type":"config-entry","op":"upsert","entry":{}}', "config-entry.op must be set, cas or delete"],
    ["a config-entry without an entry", '{"type":"config-entry","op":"set"}', "config-entry.entry must be an object"],
    ["an unknown entry kind", '{"type":"config-entry","op":"set","entry":{"Kind":"mesh","Name":"x"}}', 'config-entry.entry.Kind "mesh" is not a config entry kind'],
    ["an entry without a name", '{"type":"config-entry","op":"set","entry":{"Kind":"service-defaults"}}', "config-entry.entry.Name must be a string"],
    ["service-defaults without a protocol", '{"type":"config-entry","op":"set","entry":{"Kind":"service-defaults","Name":"x","MeshGateway":{},"Expose":{}}}', "config-entry.entry.Protocol must be a string"],
    ["service-defaults without MeshGateway", '{"type":"config-entry","op":"set","entry":{"Kind":"service-defaults","Name":"x","Protocol":"http","Expose":{}}}', "config-entry.entry.MeshGateway must be an object"],
    ["a bad Meta", `{"type":"config-entry","op":"set","entry":${sd.replace('"Name"', '"Meta":{"a":1},"Name"')}}`, "config-entry.entry.Meta must be an object of strings"],
    ["a router without routes", '{"type":"config-entry","op":"set","entry":{"Kind":"service-router","Name":"x"}}', "config-entry.entry.Routes must be an array"],
    ["a splitter with a string weight", '{"type":"config-entry","op":"set","entry":{"Kind":"service-splitter","Name":"x","Splits":[{"Weight":"50"}]}}', "config-entry.entry.Splits[0].Weight must be a number"],
    ["a resolver with a bad timeout", '{"type":"config-entry","op":"set","entry":{"Kind":"service-resolver","Name":"x","ConnectTimeout":5}}', "config-entry.entry.ConnectTimeout must be a string"],
    ["a cas without an index", `{"type":"config-entry","op":"cas","entry":${sd}}`, "config-entry.index must be a non-negative integer"],
    ["a cas with a negative index", `{"type":"config-entry","op":"cas","entry":${sd},"index":-1}`, "config-entry.index must be a non-negative integer"],
    ["a delete without a name", '{"type":"config-entry","op":"delete","kind":"service-defaults"}', "config-entry.name must be a string"],
    ["an intention with a bad op", '{"type":"intention","op":"set"}', "intention.op must be upsert or delete"],
    ["an intention delete without an id", '{"type":"intention","op":"delete"}', "intention.id must be a string"],
    ["an intention without a destination", `{"type":"intention","op":"upsert","intention":${ixn.replace('"DestinationName":"b",', "")}}`, "intention.intention.DestinationName must be a string"],
    ["an intention with a bad action", `{"type":"intention","op":"upsert","intention":${ixn.replace('"allow"', '"maybe"')}}`, "intention.intention.Action must be allow or deny"],
    ["an intention with a string precedence", `{"type":"intention","op":"upsert","intention":${ixn.replace('"Precedence":9', '"Precedence":"9"')}}`, "intention.intention.Precedence must be a number"],
    ["a ca with a bad op", '{"type":"ca","op":"rotate"}', "ca.op must be set-config or set-roots"],
    ["a ca config with another provider", `{"type":"ca","op":"set-config","config":${cfg.replace('"consul"', '"vault"')}}`, 'ca.config.Provider must be "consul"'],
    ["a ca config without Config", '{"type":"ca","op":"set-config","config":{"ClusterID":"c","Provider":"consul"}}', "ca.config.Config must be an object"],
    ["a ca config without a leaf TTL", `{"type":"ca","op":"set-config","config":${cfg.replace('"LeafCertTTL":"72h",', "")}}`, "ca.config.Config.LeafCertTTL must be a string"],
    ["set-roots without roots", '{"type":"ca","op":"set-roots","index":0}', "ca.roots must be an array"],
    ["set-roots with a bad root", `{"type":"ca","op":"set-roots","index":0,"roots":[${r.replace('"Active":true', '"Active":"yes"')}]}`, "ca.roots[0].Active must be a boolean"],
    ["set-roots with null intermediates", `{"type":"ca","op":"set-roots","index":0,"roots":[${r.replace('"IntermediateCerts":[]', '"IntermediateCerts":null')}]}`, "ca.roots[0].IntermediateCerts must be an array of strings"],
    ["set-roots without an index", `{"type":"ca","op":"set-roots","roots":[${r}]}`, "ca.index must be a non-negative integer"],
    ["set-roots with a null config", `{"type":"ca","op":"set-roots","roots":[${r}],"index":0,"config":null}`, "ca.config must be an object"],
  ])("rejects %s", (_: string, input: string, message: string) => {
    expect(() => decodeCommand(utf8(input))).toThrow(StateCommandError);
    expect(() => decodeCommand(utf8(input))).toThrow(message);
  });
});

describe("snapshot with the Connect tables", () => {
  const history: StateCommand[] = [
    register("n1"),
    setEntry(serviceDefaults("web")),
    setEntry(resolver("web", { Subsets: { b: { OnlyPassing: true }, a: { Filter: "x" } } })),
    router,
    upsert(intention("i1", "web", "db")),
    upsert(intention("I2", "*", "db", { Meta: { z: "1", a: "2" } })),
    { type: "ca", op: "set-config", config: caConfig("c", "KEY") },
    setRoots([root("r2", true), root("r1", false)], 0),
    { type: "kv", op: "set", entry: { Key: "k", Value: utf8("v") } },
  ];

  test("round trip restores entries, intentions, roots, config and their indexes; bytes are stable", () => {
    const a = harness();
    for (const c of history) expect(a.apply(c).type).not.toBe("error");
    const snap = a.store.snapshot();
    const b = harness();
    b.store.restore(snap);
    expect(b.store.snapshot()).toEqual(snap);
    const views = (h: typeof a) => [configEntryList(h.store, ws()), intentionList(h.store, ws()), caRoots(h.store, ws()), kvList(h.store, ws(), "")];
    expect(views(b)).toEqual(views(a));
    expect(configEntryList(b.store, ws()).index).toBe(4);
    expect(intentionList(b.store, ws()).index).toBe(6);
    expect(caRoots(b.store, ws()).index).toBe(8);
    // The restored tables behave: the duplicate index, the CA roots CAS index and CreateIndex carry over.
    expect(b.apply(upsert(intention("i3", "WEB", "DB"))).type).toBe("error");
    const next: StateCommand[] = [setRoots([root("r3", true), root("r2", false)], 8), setEntry(serviceDefaults("web", "tcp"))];
    for (const c of next) {
      expect(a.store.apply(20, c)).toEqual(b.store.apply(20, c));
    }
    expect(b.store.snapshot()).toEqual(a.store.snapshot());
  });

  test("equal Connect states give equal bytes whatever the insertion order", () => {
    const one = harness(), two = harness();
    const cmds = [setEntry(serviceDefaults("a")), setEntry(serviceDefaults("b"))];
    one.store.apply(1, cmds[0]!);
    one.store.apply(1, cmds[1]!);
    two.store.apply(1, cmds[1]!);
    two.store.apply(1, cmds[0]!);
    expect(one.store.snapshot()).toEqual(two.store.snapshot());
  });

  test("a snapshot without the Connect tables restores them empty; malformed rows are rejected", () => {
    const h = harness();
    h.apply(register("n1"));
    const doc = JSON.parse(new TextDecoder().decode(h.store.snapshot())) as Record<string, unknown>;
    for (const k of ["configEntries", "intentions", "caRoots", "caConfig"]) delete doc[k];
    const b = harness();
    b.store.restore(utf8(JSON.stringify(doc)));
    expect(b.store.snapshot()).toEqual(h.store.snapshot());
    expect(caRoots(b.store, ws())).toEqual({ index: 0, value: { roots: [], config: null, rootsIndex: 0 } });
    const dupe = [intention("a", "web", "db"), intention("b", "Web", "DB")];
    for (const [patch, message] of [
      [{ configEntries: [{ Kind: "service-defaults" }] }, "configEntries[0].Name must be a string"],
      [{ intentions: dupe }, "intentions[1] duplicates another intention's source and destination"],
      [{ caRoots: {} }, "caRoots must be an array"],
      [{ caConfig: { ClusterID: "c" } }, "caConfig.Provider must be a string"],
    ] as const) {
      expect(() => b.store.restore(utf8(JSON.stringify({ ...doc, ...patch })))).toThrow(message);
    }
  });
});
