import { describe, expect, test } from "bun:test";
import type { StateCommand } from "./commands.ts";
import { caConfig, intention, root, serviceDefaults, setEntry, setRoots, upsert } from "./connect_fixtures.test.ts";
import { check, harness, register, service, utf8 } from "./fixtures.test.ts";
import { checkSnapshot, InvalidSnapshotError } from "./snapshot_check.ts";

/** A state with every kind of row and reference: nodes, services, checks, a session holding a lock, Connect tables. */
const history: StateCommand[] = [
  register("n1", {
    ID: "aaaaaaaa-0000-0000-0000-000000000001", Service: service("web1", "web"),
    Checks: [check("serfHealth", "passing"), check("web-check", "passing", { ServiceID: "web1" })],
  }),
  register("n2", { ID: "aaaaaaaa-0000-0000-0000-000000000002" }),
  { type: "session", op: "create", session: { ID: "sess-1", Node: "n1", NodeChecks: ["serfHealth"], LockDelay: 1e9, Behavior: "release", TTL: "", Name: "x", ServiceChecks: [{ ID: "web-check" }] } },
  { type: "kv", op: "lock", entry: { Key: "locks/a", Session: "sess-1", Value: utf8("held") } },
  { type: "kv", op: "set", entry: { Key: "cfg/a", Value: utf8("1") } },
  { type: "kv", op: "delete", entry: { Key: "cfg/a" } },
  setEntry(serviceDefaults("web")),
  upsert(intention("i1", "web", "db")),
  setRoots([root("r1", true)], 0, caConfig()),
];

function snapshotDoc(): Record<string, any> {
  const h = harness();
  for (const c of history) expect(h.apply(c).type).not.toBe("error");
  return JSON.parse(new TextDecoder().decode(h.store.snapshot()));
}

const bytes = (doc: unknown) => utf8(JSON.stringify(doc));

function refusal(mutate: (doc: Record<string, any>) => void): string {
  const doc = snapshotDoc();
  mutate(doc);
  try {
    checkSnapshot(bytes(doc));
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidSnapshotError);
    return (e as Error).message;
  }
  return "accepted";
}

describe("snapshot check", () => {
  test("a snapshot the store wrote passes", () => {
    expect(() => checkSnapshot(bytes(snapshotDoc()))).not.toThrow();
  });

  test("types: format, unknown fields, row shapes, KV tuples", () => {
    expect(() => checkSnapshot(utf8("{"))).toThrow("invalid snapshot: not JSON");
    expect(refusal((d) => (d.format = "other/1"))).toBe("invalid snapshot: unknown format (want causeway-state/1)");
    expect(refusal((d) => (d.extra = []))).toBe('invalid snapshot: unknown field "extra" (a snapshot of another version?)');
    expect(refusal((d) => (d.restoreStaging = {}))).toBe('invalid snapshot: unknown field "restoreStaging" (a snapshot of another version?)');
    expect(refusal((d) => (d.lastIndex = -1))).toBe("invalid snapshot: lastIndex must be a non-negative integer");
    expect(refusal((d) => (d.nodes[0].Node = 7))).toBe("invalid snapshot: nodes[0].Node must be a string");
    expect(refusal((d) => (d.services[0].Service.Port = "80"))).toBe("invalid snapshot: services[0].Service.Port must be a number");
    expect(refusal((d) => delete d.services[0].Service.Connect)).toBe("invalid snapshot: services[0].Service.Connect must be an object");
    expect(refusal((d) => (d.checks[0].Status = "fine"))).toBe("invalid snapshot: checks[0].Status must be passing, warning or critical");
    expect(refusal((d) => (d.sessions[0].Behavior = "keep"))).toBe("invalid snapshot: sessions[0].Behavior must be release or delete");
    expect(refusal((d) => (d.kvs[0] = ["x"]))).toBe("invalid snapshot: kvs[0] must be [LockIndex, Key, Flags, Value, Session, CreateIndex, ModifyIndex]");
    expect(refusal((d) => (d.kvs[0][3] = "***"))).toBe("invalid snapshot: kvs[0] value is not base64");
    expect(refusal((d) => (d.configEntries[0].Kind = "mesh"))).toBe('invalid snapshot: configEntries[0].Kind "mesh" is not a config entry kind');
    expect(refusal((d) => (d.intentions[0].Action = "maybe"))).toBe("invalid snapshot: intentions[0].Action must be allow or deny");
    expect(refusal((d) => (d.caRoots[0].Active = false))).toBe("invalid snapshot: caRoots must have exactly one active root, not 0");
    expect(refusal((d) => (d.caConfig.Provider = "vault"))).toBe('invalid snapshot: caConfig.Provider must be "consul"');
  });

  test("index ranges", () => {
    expect(refusal((d) => (d.nodes[0].ModifyIndex = d.lastIndex + 1))).toMatch(/^invalid snapshot: nodes\[0\]\.ModifyIndex \(\d+\) is above the snapshot's lastIndex \(\d+\)$/);
    expect(refusal((d) => (d.nodes[1].CreateIndex = d.nodes[1].ModifyIndex + 1))).toMatch(/nodes\[1\]\.CreateIndex \(\d+\) is above its ModifyIndex/);
    expect(refusal((d) => (d.checks[1].CreateIndex = 1.5))).toBe("invalid snapshot: checks[1].CreateIndex must be a non-negative integer");
    expect(refusal((d) => (d.kvs[0][0] = -1))).toBe("invalid snapshot: kvs[0] LockIndex must be a non-negative integer");
    expect(refusal((d) => (d.kvs[0][6] = 1e9))).toMatch(/kvs\[0\] \(key "locks\/a"\)\.ModifyIndex \(1000000000\) is above the snapshot's lastIndex/);
    expect(refusal((d) => (d.indexes[0][1] = d.lastIndex + 5))).toMatch(/^invalid snapshot: indexes\[0\] index \(\d+\) is above the snapshot's lastIndex/);
    expect(refusal((d) => (d.tombstones[0][1] = -3))).toBe("invalid snapshot: tombstones[0] must be [string, non-negative integer]");
    expect(refusal((d) => (d.configEntries[0].ModifyIndex = d.lastIndex + 1))).toMatch(/configEntries\[0\]\.ModifyIndex/);
  });

  test("duplicates", () => {
    expect(refusal((d) => d.nodes.push({ ...d.nodes[0], Node: "N1", ID: "" }))).toBe('invalid snapshot: nodes[2] repeats node "N1"');
    expect(refusal((d) => d.nodes.push({ ...d.nodes[0], Node: "n3" }))).toBe('invalid snapshot: nodes[2] repeats node ID "aaaaaaaa-0000-0000-0000-000000000001"');
    expect(refusal((d) => d.kvs.push(d.kvs[0]))).toBe('invalid snapshot: kvs[1] repeats key "locks/a"');
    expect(refusal((d) => d.sessions.push(d.sessions[0]))).toBe('invalid snapshot: sessions[1] repeats session "sess-1"');
    expect(refusal((d) => d.intentions.push({ ...d.intentions[0], SourceName: "api" }))).toBe('invalid snapshot: intentions[1] repeats intention "i1"');
    expect(refusal((d) => d.intentions.push({ ...d.intentions[0], ID: "i2" }))).toBe("invalid snapshot: intentions[1] duplicates another intention's source and destination");
  });

  test("references: locks held by unknown sessions, rows on unknown nodes, checks of unknown services, sessions tied to unknown checks", () => {
    expect(refusal((d) => (d.kvs[0][4] = "ghost"))).toBe('invalid snapshot: kvs[0] (key "locks/a") is locked by session "ghost", which the snapshot does not have');
    expect(refusal((d) => (d.sessions = []))).toBe('invalid snapshot: kvs[0] (key "locks/a") is locked by session "sess-1", which the snapshot does not have');
    expect(refusal((d) => (d.services[0].Node = "gone"))).toBe('invalid snapshot: services[0] is on node "gone", which the snapshot does not have');
    expect(refusal((d) => (d.checks[0].Node = "gone"))).toBe('invalid snapshot: checks[0] is on node "gone", which the snapshot does not have');
    expect(refusal((d) => (d.checks[1].ServiceID = "api1"))).toBe('invalid snapshot: checks[1] belongs to service "api1", which node "n1" does not have');
    expect(refusal((d) => (d.sessions[0].NodeChecks = ["nope"]))).toBe('invalid snapshot: sessions[0] is tied to check "nope", which node "n1" does not have');
    expect(refusal((d) => (d.sessions[0].Node = "n2"))).toBe('invalid snapshot: sessions[0] is tied to check "serfHealth", which node "n2" does not have');
  });

  test("config entries are checked as a graph by the caller's check", () => {
    const doc = snapshotDoc();
    const seen: string[] = [];
    const checkConfigEntries = (entries: readonly { Kind: string; Name: string }[]) => {
      seen.push(...entries.map((e) => `${e.Kind}/${e.Name}`));
      return "service-router \"web\" needs an http protocol";
    };
    expect(() => checkSnapshot(bytes(doc), { checkConfigEntries })).toThrow('invalid snapshot: configEntries: service-router "web" needs an http protocol');
    expect(seen).toEqual(["service-defaults/web"]);
    expect(() => checkSnapshot(bytes(doc), { checkConfigEntries: () => undefined })).not.toThrow();
  });
});
