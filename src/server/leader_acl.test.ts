import { describe, expect, test } from "bun:test";
import { ANONYMOUS_TOKEN_SECRET, GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES } from "../model/index.ts";
import { memoryLogger } from "../platform/index.ts";
import { aclBootstrapState, aclPolicyGet, aclTokenGetBySecret, aclTokenList, createStateStore, WatchSet, type StateCommand } from "../state/index.ts";
import { flushMacrotask, simClock } from "../../test/harness/sim_clock.ts";
import { aclInitCommands, aclInitRoutine, aclTokenReaperRoutine, REAP_INTERVAL_MS } from "./leader_acl.ts";

const MASTER = "6a1e8b4c-1d2e-4f3a-9b8c-7d6e5f4a3b2c";

function setup(o: { primary?: boolean; master?: string } = {}) {
  const clock = simClock(Date.parse("2026-12-03T12:00:00Z"));
  const store = createStateStore({ clock });
  let index = 0;
  const proposed: StateCommand[] = [];
  let uuids = 0;
  const opts = {
    store, primary: o.primary ?? true, masterToken: o.master ?? "", clock, logger: memoryLogger("info"),
    barrier: async () => {},
    propose: async (cmd: StateCommand) => (proposed.push(cmd), store.apply(++index, cmd)),
    newUuid: () => `aaaaaaaa-bbbb-4ccc-8ddd-${String(++uuids).padStart(12, "0")}`,
  };
  return { clock, store, proposed, opts, ws: () => new WatchSet() };
}

describe("ACL initialization on the primary's leader", () => {
  test("creates global-management, the anonymous token and the master token (through bootstrap), once", async () => {
    const t = setup({ master: MASTER });
    const r = aclInitRoutine(t.opts);
    r.start();
    await flushMacrotask();
    expect(t.proposed.map((c) => c.type)).toEqual(["acl-policy", "acl-token", "acl-bootstrap"]);
    expect(aclPolicyGet(t.store, t.ws(), GLOBAL_MANAGEMENT_POLICY_ID).value).toMatchObject({ Name: "global-management", Rules: GLOBAL_MANAGEMENT_RULES });
    expect(aclTokenGetBySecret(t.store, t.ws(), ANONYMOUS_TOKEN_SECRET).value).toMatchObject({ AccessorID: "00000000-0000-0000-0000-000000000002", Description: "Anonymous Token" });
    expect(aclTokenGetBySecret(t.store, t.ws(), MASTER).value).toMatchObject({ Description: "Master Token", Type: "management", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }] });
    expect(aclBootstrapState(t.store).allowed).toBe(false); // the master token used bootstrap up
    expect(aclInitCommands(t.opts, 0)).toEqual([]);
    r.stop();
  });

  test("bootstrap already used: the master token is written as a token; a renamed global-management keeps its name", async () => {
    const t = setup({ master: MASTER });
    const r = aclInitRoutine({ ...t.opts, masterToken: "" });
    r.start();
    await flushMacrotask();
    t.store.apply(100, { type: "acl-bootstrap", token: { AccessorID: "bbbbbbbb-0000-4000-8000-000000000001", SecretID: "s", Description: "", Local: false, CreateTime: "x", Hash: "" }, resetIndex: 0 });
    t.store.apply(101, { type: "acl-policy", op: "set", policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "admin", Description: "mine", Rules: GLOBAL_MANAGEMENT_RULES, Hash: "" }] });
    r.stop();
    const again = aclInitRoutine(t.opts);
    again.start();
    await flushMacrotask();
    expect(t.proposed.slice(-2).map((c) => c.type)).toEqual(["acl-bootstrap", "acl-token"]);
    expect(aclTokenGetBySecret(t.store, t.ws(), MASTER).value?.Description).toBe("Master Token");
    expect(aclPolicyGet(t.store, t.ws(), GLOBAL_MANAGEMENT_POLICY_ID).value?.Name).toBe("admin");
    again.stop();
  });

  test("onInitialized is told after a run that wrote something, not after one that found everything in place", async () => {
    const t = setup({ master: MASTER });
    let told = 0;
    const r = aclInitRoutine({ ...t.opts, onInitialized: () => void told++ });
    r.start();
    await flushMacrotask();
    expect(told).toBe(1);
    r.stop();
    r.start(); // leadership again: nothing left to write
    await flushMacrotask();
    expect(told).toBe(1);
    r.stop();
  });

  test("a secondary initializes nothing", () => {
    expect(aclInitCommands({ ...setup().opts, primary: false }, 0)).toEqual([]);
  });
});

describe("expired token reaping", () => {
  test("expired tokens are deleted every interval: local ones everywhere, global ones in the primary only", async () => {
    for (const primary of [true, false]) {
      const t = setup({ primary });
      const token = (n: number, expires: string | undefined, local: boolean) => ({
        AccessorID: `cccccccc-0000-4000-8000-00000000000${n}`, SecretID: `dddddddd-0000-4000-8000-00000000000${n}`, Description: `t${n}`, Local: local,
        CreateTime: "2026-12-03T11:00:00Z", Hash: "", ...(expires ? { ExpirationTime: expires } : {}),
      });
      t.store.apply(1, { type: "acl-token", op: "set", tokens: [token(1, "2026-12-03T12:00:03Z", true), token(2, "2026-12-03T12:00:03Z", false), token(3, "2026-12-03T13:00:00Z", true), token(4, undefined, false)] });
      const r = aclTokenReaperRoutine(t.opts);
      r.start();
      t.clock.advance(REAP_INTERVAL_MS);
      await flushMacrotask();
      const left = aclTokenList(t.store, t.ws()).value.map((x) => x.Description);
      expect(left, `primary ${primary}`).toEqual(primary ? ["t3", "t4"] : ["t2", "t3", "t4"]);
      r.stop();
    }
  });
});
