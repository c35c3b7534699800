import { describe, expect, test } from "bun:test";
import { ConnectError } from "@connectrpc/connect";
import type { ConsensusNode } from "../consensus/index.ts";
import { ANONYMOUS_TOKEN_ACCESSOR_ID, ANONYMOUS_TOKEN_SECRET } from "../model/index.ts";
import { silentLogger } from "../platform/index.ts";
import { decodeWire, encodeWire } from "../rpc/index.ts";
import { encodeCommand, type StateCommand, type StateResult } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createReplicatedState } from "./replicated_state.ts";

const APP = "aaaaaaaa-0000-4000-8000-000000000001";
const EXPIRED = "aaaaaaaa-0000-4000-8000-000000000002";

/** A server's replicated state with ACLs (default deny) over a consensus of one that applies at once. */
function server(defaultToken: string | (() => string) = "", resetFile = { index: 0, removed: 0 }) {
  const clock = simClock(Date.parse("2026-12-03T12:00:00Z"));
  const bootstrapReset = { read: () => resetFile.index, remove: () => void resetFile.removed++ };
  const rs = createReplicatedState({
    clock, logger: silentLogger(), datacenter: "dc1", nodeName: "s1", acl: { masterToken: "", defaultPolicy: "deny", defaultToken: typeof defaultToken === "function" ? defaultToken : () => defaultToken, enableKeyListPolicy: false, bootstrapReset },
  });
  let index = 0;
  const node = { propose: async (b: Uint8Array) => rs.stateMachine.apply(++index, b), read: async () => {}, status: () => ({ term: 1, leader: "s1" }) } as unknown as ConsensusNode<StateResult>;
  rs.attach(node);
  const direct = (cmd: StateCommand) => rs.stateMachine.apply(++index, encodeCommand(cmd));
  const token = (n: string, secret: string, more: object = {}) => ({ AccessorID: n, SecretID: secret, Description: "", Local: false, CreateTime: "x", Hash: "", ...more });
  direct({ type: "acl-policy", op: "set", policies: [{ ID: "p-app", Name: "app", Description: "", Rules: `key_prefix "app/" { policy = "write" }`, Hash: "" }] });
  direct({ type: "acl-token", op: "set", tokens: [
    token(ANONYMOUS_TOKEN_ACCESSOR_ID, ANONYMOUS_TOKEN_SECRET),
    token(APP, "app-secret", { Policies: [{ ID: "p-app", Name: "" }] }),
    token(EXPIRED, "old-secret", { Policies: [{ ID: "p-app", Name: "" }], ExpirationTime: "2026-12-03T11:00:00Z" }),
  ] });
  const apply = async (cmd: StateCommand, tok?: string) => decodeWire<StateResult>(await rs.backend.apply(encodeCommand(cmd), tok));
  const read = async (q: object, tok?: string) => decodeWire<unknown>((await rs.backend.query(encodeWire(q), { minIndex: 0, maxWaitMs: 0, ...(tok !== undefined ? { token: tok } : {}) })).result);
  return { apply, read, backend: rs.backend, direct };
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return [(err as ConnectError).code, (err as ConnectError).rawMessage];
  }
  return "allowed";
};

const put = (Key: string): StateCommand => ({ type: "kv", op: "set", entry: { Key } });

describe("ACL enforcement on a server", () => {
  test("a request's token decides its writes; the anonymous token gets default deny; the server's own duties pass", async () => {
    const s = server();
    expect(await s.apply(put("app/x"), "app-secret")).toEqual({ type: "kv", ok: true });
    expect(await refusal(s.apply(put("other"), "app-secret"))).toEqual([7, "Permission denied"]);
    expect(await refusal(s.apply(put("app/x"), ""))).toEqual([7, "Permission denied"]);
    expect(await s.apply(put("other"))).toEqual({ type: "kv", ok: true }); // no token: this server's own duty
  });

  test("an unknown or expired secret is ACL not found; a root name cannot be resolved", async () => {
    const s = server();
    expect(await refusal(s.apply(put("app/x"), "nope"))).toEqual([7, "ACL not found"]);
    expect(await refusal(s.apply(put("app/x"), "old-secret"))).toEqual([7, "ACL not found"]);
    expect(await refusal(s.read({ type: "kv-list", prefix: "" }, "nope"))).toEqual([7, "ACL not found"]);
    expect(await refusal(s.apply(put("app/x"), "manage"))).toEqual([7, "Cannot resolve root ACL"]);
  });

  test("reads: a point read it may not make is denied; lists are filtered", async () => {
    const s = server();
    await s.apply(put("app/a"));
    await s.apply(put("other"));
    expect(await refusal(s.read({ type: "kv-get", key: "other" }, "app-secret"))).toEqual([7, "Permission denied"]);
    expect(((await s.read({ type: "kv-list", prefix: "" }, "app-secret")) as { Key: string }[]).map((e) => e.Key)).toEqual(["app/a"]);
    expect(await s.read({ type: "kv-list", prefix: "" }, "")).toEqual([]);
  });

  test("a transaction with denied operations answers an error per operation and writes nothing", async () => {
    const s = server();
    const r = await s.apply({ type: "txn", ops: [{ KV: { Verb: "set", Key: "app/a" } }, { KV: { Verb: "set", Key: "other" } }] }, "app-secret");
    expect(r).toEqual({ type: "txn", Results: null, Errors: [{ OpIndex: 1, What: "Permission denied" }] });
    expect(await s.read({ type: "kv-get", key: "app/a" })).toBeNull();
  });

  test("bootstrap needs no token; once used up only the reset file's matching index allows another (and the file goes)", async () => {
    const reset = { index: 0, removed: 0 };
    const s = server("", reset);
    const boot = (n: number): StateCommand => ({
      type: "acl-bootstrap", resetIndex: 99, token: { AccessorID: `bbbbbbbb-0000-4000-8000-00000000000${n}`, SecretID: `boot-${n}`, Description: "", Local: false, CreateTime: "x", Hash: "" },
    });
    expect(await s.apply(boot(1), "")).toEqual({ type: "ok" }); // the resetIndex a client sends is not trusted: 0 is used
    expect(await refusal(s.apply(boot(2), ""))).toEqual([7, "Permission denied: ACL bootstrap no longer allowed (reset index: 3)"]);
    reset.index = 2;
    expect(await refusal(s.apply(boot(2), ""))).toEqual([3, "Invalid bootstrap reset index (specified 2, reset index: 3)"]);
    reset.index = 3;
    expect(await s.apply(boot(2), "")).toEqual({ type: "ok" });
    expect(reset.removed).toBe(2);
  });

  test("ACL reads: expired tokens are not found, links are named; acl:read is needed; a token reads itself by its secret", async () => {
    const s = server();
    expect(await s.read({ type: "acl-token-get", accessor: EXPIRED })).toBeNull();
    expect(await s.read({ type: "acl-token-get", accessor: APP })).toMatchObject({ Policies: [{ ID: "p-app", Name: "app" }] });
    expect(((await s.read({ type: "acl-token-list" })) as { AccessorID: string }[]).map((t) => t.AccessorID)).toEqual([ANONYMOUS_TOKEN_ACCESSOR_ID, APP]);
    expect(await refusal(s.read({ type: "acl-token-get", accessor: APP }, "app-secret"))).toEqual([7, "Permission denied"]);
    expect(await s.read({ type: "acl-token-self", secret: "app-secret" }, "app-secret")).toMatchObject({ AccessorID: APP });
    expect(await s.read({ type: "acl-bootstrap-state" }, "")).toEqual({ allowed: true, resetIndex: 0 });
  });

  test("the server's default token stands in for an empty one, as it is now (a reload or the agent token API changes it)", async () => {
    const s = server("app-secret");
    expect(await s.apply(put("app/y"), "")).toEqual({ type: "kv", ok: true });
    let current = "";
    const changing = server(() => current);
    expect(await refusal(changing.apply(put("app/y"), ""))).toEqual([7, "Permission denied"]);
    current = "app-secret";
    expect(await changing.apply(put("app/y"), "")).toEqual({ type: "kv", ok: true });
  });

  test("session renewal needs session:write on the session's node; CA calls check after Connect", async () => {
    const s = server();
    s.direct({ type: "acl-policy", op: "set", policies: [{ ID: "p-sess", Name: "sess", Description: "", Rules: `session "n1" { policy = "write" }`, Hash: "" }] });
    s.direct({ type: "acl-token", op: "set", tokens: [{ AccessorID: "aaaaaaaa-0000-4000-8000-000000000003", SecretID: "sess-secret", Description: "", Local: false, CreateTime: "x", Hash: "", Policies: [{ ID: "p-sess", Name: "" }] }] });
    expect(await s.apply({ type: "register", req: { Node: "n1", Address: "10.0.0.1" } })).toEqual({ type: "ok" });
    const created = await s.apply({ type: "session", op: "create", session: { ID: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "10s", NodeChecks: [], ServiceChecks: null } });
    expect(created).toEqual({ type: "session", id: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" });
    const renew = async (tok?: string) => decodeWire<{ ID: string }[]>(await s.backend.renewSession("0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", tok)).map((x) => x.ID);
    expect(await renew("sess-secret")).toEqual(["0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c"]);
    expect(await renew()).toEqual(["0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c"]); // the server's own duty
    expect(await refusal(renew("app-secret"))).toEqual([7, "Permission denied"]);
    expect(await refusal(renew(""))).toEqual([7, "Permission denied"]);
    expect(await refusal(s.backend.renewSession("unknown", "nope"))).toEqual([7, "ACL not found"]);
    expect(decodeWire(await s.backend.renewSession("unknown", "sess-secret"))).toEqual([]);
    expect(await refusal(s.backend.signLeaf("web", "csr", "app-secret"))).toEqual([9, "Connect must be enabled in order to use this endpoint"]);
  });
});
