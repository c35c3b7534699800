import { describe, expect, test } from "bun:test";
import type { AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";
import { memoryLogger, seededRng } from "../platform/index.ts";
import { createStateStore, WatchSet, aclPolicyList, aclRoleList, aclTokenList, type StateCommand } from "../state/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { aclReplicationRoutine, type AclReplicationKind, type AclReplicationObjects } from "./leader_acl_replication.ts";

const policy = (ID: string, Hash: string): AclPolicy => ({ ID, Name: `p-${ID}`, Description: "", Rules: "", Hash, CreateIndex: 5, ModifyIndex: 5 });
const role = (ID: string, Hash: string, policyId: string): AclRole => ({ ID, Name: `r-${ID}`, Description: "", Policies: [{ ID: policyId, Name: "" }], Hash, CreateIndex: 6, ModifyIndex: 6 });
const token = (AccessorID: string, Hash: string, Local = false): AclTokenRecord => ({
  AccessorID, SecretID: `s-${AccessorID}`, Description: "", Local, CreateTime: "2026-12-03T12:00:00Z", Hash, Roles: [{ ID: "r1", Name: "" }], CreateIndex: 7, ModifyIndex: 7,
});

/** A primary whose lists the test edits (each change bumps the index and wakes blocked reads), and a secondary's store. */
function setup(o: { tokenReplication?: boolean; enabled?: boolean; failFirst?: number } = {}) {
  const clock = simClock(Date.parse("2026-12-03T12:00:00Z"));
  const store = createStateStore({ clock });
  let index = 10;
  let remote: AclReplicationObjects = { policies: [policy("p1", "h1")], roles: [role("r1", "h1", "p1")], tokens: [token("t1", "h1")] };
  const waiters = new Set<() => void>();
  let failures = o.failFirst ?? 0;
  const applied: StateCommand[] = [];
  let raftIndex = 0;
  const log = memoryLogger("debug");
  const routine = aclReplicationRoutine({
    async fetch<K extends AclReplicationKind>(kind: K, minIndex: number, signal: AbortSignal) {
      if (failures > 0) {
        failures--;
        throw new Error("primary unreachable");
      }
      if (minIndex >= index) {
        await new Promise<void>((resolve) => {
          waiters.add(resolve);
          signal.addEventListener("abort", () => resolve());
        });
      }
      return { index, items: remote[kind] };
    },
    local: (kind) => (kind === "policies" ? aclPolicyList(store, new WatchSet()).value : kind === "roles" ? aclRoleList(store, new WatchSet()).value : aclTokenList(store, new WatchSet()).value) as never,
    async apply(cmd) {
      applied.push(cmd);
      const r = store.apply(++raftIndex, cmd);
      if (r.type === "error") throw new Error(r.error);
    },
    tokenReplication: o.tokenReplication ?? false,
    sourceDatacenter: "dc1",
    ...(o.enabled !== undefined ? { enabled: () => o.enabled! } : {}),
    clock, rng: seededRng(1), logger: log,
  });
  const change = (next: Partial<AclReplicationObjects>) => {
    remote = { ...remote, ...next };
    index++;
    for (const w of [...waiters]) w();
    waiters.clear();
  };
  return { clock, store, routine, applied, change, log, settle: () => runSimTimers(clock, 5_000) };
}

describe("ACL replication on a secondary's leader", () => {
  test("policies and roles replicate (roles with missing links allowed); tokens only with token replication", async () => {
    const s = setup();
    s.routine.start();
    await s.settle();
    expect(aclPolicyList(s.store, new WatchSet()).value.map((p) => [p.ID, p.Hash])).toEqual([["p1", "h1"]]);
    expect(aclRoleList(s.store, new WatchSet()).value.map((r) => r.ID)).toEqual(["r1"]);
    expect(aclTokenList(s.store, new WatchSet()).value).toEqual([]);
    expect(s.routine.status()).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: "dc1", ReplicationType: "policies", ReplicatedIndex: 10, ReplicatedRoleIndex: 10, ReplicatedTokenIndex: 0 });
    expect(s.routine.status().LastSuccess).toBe("2026-12-03T12:00:00.000Z");

    // A change upstream: p1 edited, p2 added; r1 dropped. Unchanged objects are not rewritten.
    const before = s.applied.length;
    s.change({ policies: [policy("p1", "h2"), policy("p2", "h1")], roles: [] });
    await s.settle();
    expect(aclPolicyList(s.store, new WatchSet()).value.map((p) => [p.ID, p.Hash])).toEqual([["p1", "h2"], ["p2", "h1"]]);
    expect(aclRoleList(s.store, new WatchSet()).value).toEqual([]);
    expect(s.applied.slice(before).map((c) => `${c.type} ${(c as { op?: string }).op}`).sort()).toEqual(["acl-policy set", "acl-role delete"]);
    s.routine.stop();
    expect(s.routine.status().Running).toBe(false);
  });

  test("token replication: global tokens only; a local token of the secondary is never touched", async () => {
    const s = setup({ tokenReplication: true });
    s.store.apply(100, { type: "acl-token", op: "set", tokens: [{ ...token("local-1", "x", true), Roles: [] }], allowMissingLinks: true });
    s.routine.start();
    await s.settle();
    s.change({ tokens: [token("t1", "h1"), token("primary-local", "h", true)] });
    await s.settle();
    expect(aclTokenList(s.store, new WatchSet()).value.map((t) => t.AccessorID).sort()).toEqual(["local-1", "t1"]);
    expect(s.routine.status()).toMatchObject({ ReplicationType: "tokens", ReplicatedTokenIndex: 11 });
    s.routine.stop();
  });

  test("a failed round is recorded in LastError and retried with a back-off; without a replication token nothing runs", async () => {
    const s = setup({ failFirst: 1 });
    s.routine.start();
    await runSimTimers(s.clock, 60_000, () => aclPolicyList(s.store, new WatchSet()).value.length === 1);
    expect(aclPolicyList(s.store, new WatchSet()).value.length).toBe(1);
    expect(s.routine.status().LastError).not.toBe("0001-01-01T00:00:00Z");
    expect(s.log.lines.some((l) => l.includes("ACL replication error") && l.includes("primary unreachable"))).toBe(true);
    s.routine.stop();

    const off = setup({ enabled: false });
    off.routine.start();
    await off.settle();
    expect(off.applied).toEqual([]);
    expect(off.routine.status()).toMatchObject({ Enabled: false, Running: false });
  });
});
