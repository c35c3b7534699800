/** `PUT /v1/agent/token/<name>` against the in-process ACL cluster: who may set which token, and its effect. */
import { describe, expect, test } from "bun:test";
import { aclCluster } from "../../test/harness/acl_cluster.ts";

describe("PUT /v1/agent/token/<name>", () => {
  test("needs agent:write on this node; sets the default token that tokenless requests then use", async () => {
    const { call, tokens } = await aclCluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const policy = await call("PUT", "/v1/acl/policy", root, { Name: "kv-read", Rules: `key_prefix "" { policy = "read" }` });
    const reader = (await call("PUT", "/v1/acl/token", root, { Policies: [{ ID: policy.json.ID }] })).json.SecretID as string;
    expect((await call("PUT", "/v1/kv/k", root, "v")).json).toBe(true);

    expect((await call("GET", "/v1/kv/k")).status).toBe(403); // anonymous, default deny
    expect([(await call("PUT", "/v1/agent/token/default", reader, { Token: reader })).status]).toEqual([403]);
    expect(tokens.default()).toBe("");
    const set = await call("PUT", "/v1/agent/token/acl_token", "am", { Token: reader }); // agent_master may; legacy name
    expect([set.status, set.text]).toEqual([200, ""]);
    expect(tokens.default()).toBe(reader);
    expect((await call("GET", "/v1/kv/k")).status).toBe(200); // a request without a token now carries the default

    expect((await call("PUT", "/v1/agent/token/agent", root, { Token: "a-secret" })).status).toBe(200);
    expect(tokens.agent()).toBe("a-secret");
    expect((await call("PUT", "/v1/agent/token/replication", root, { Token: "r" })).status).toBe(200);
    expect((await call("PUT", "/v1/agent/token/agent_master", root, { Token: "am2" })).status).toBe(200);
    expect([tokens.replication(), tokens.agentMaster()]).toEqual(["r", "am2"]);
    expect((await call("PUT", "/v1/agent/token/agent", "am", { Token: "x" })).status).toBe(403); // "am" is no longer agent_master: an unknown token
  });

  test("bad input: unknown name 404, undecodable body 400, non-string token 400; nothing changes", async () => {
    const { call, tokens } = await aclCluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    expect(await call("PUT", "/v1/agent/token/bogus", root, { Token: "x" })).toMatchObject({ status: 404, text: 'Token "bogus" is unknown' });
    expect(await call("PUT", "/v1/agent/token/default", root, "{")).toMatchObject({ status: 400, text: expect.stringMatching(/^Request decode failed: /) });
    expect(await call("PUT", "/v1/agent/token/default", root, { Token: 5 })).toMatchObject({ status: 400, text: "Request decode failed: Token must be a string" });
    expect(tokens.default()).toBe("");
  });

  test("ACLs off: 401 ACL support disabled", async () => {
    const { call } = await aclCluster(false);
    expect(await call("PUT", "/v1/agent/token/default", undefined, { Token: "x" })).toMatchObject({ status: 401, text: "ACL support disabled\n" });
  });
});
