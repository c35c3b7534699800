/**
 * ACL replication across two datacenters federated through mesh gateways only (the topology of
 * test/e2e/federation/lab.ts: no route between the datacenters' servers except through the built-in
 * gateways): every server runs with ACLs (default deny, token replication), the secondary's leader
 * replicates the primary's policies and tokens through the gateways with its replication token, a token
 * made in the primary works in the secondary (and for a read of the primary forwarded from it), and a
 * token revoked in the primary is refused in the secondary once the deletion replicated.
 *
 * Needs root (namespaces, nftables); CI runs as root. Every process and namespace is removed in afterAll.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentCall, poll } from "../harness/agent_process.ts";
import { FederationLab, type DcSpec } from "./federation/lab.ts";

const ROOT = "7d1e2f3a-4b5c-4d6e-8f7a-0b1c2d3e4f5a";
const DCS: DcSpec[] = [{ name: "dc1", k: 1, servers: 1 }, { name: "dc2", k: 2, servers: 1 }];
const work = mkdtempSync(join(tmpdir(), "causeway-federation-acl-"));
const lab = new FederationLab(work, DCS, "dc1", { acl: { rootToken: ROOT }, prefix: "cwa" });
let failed = false;

const within = <T>(ms: number, what: string, f: () => Promise<T>, ok: (v: T) => boolean) => poll(f, ok, ms, `${what} (bound ${ms / 1000} s)`);

/** An HTTP call to `dc`'s server with `token` ("" for none, the anonymous token). */
const as = (dc: string, token: string, method: string, path: string, body?: unknown) => agentCall(lab.httpUrl(dc), method, path, token, body);

beforeAll(() => lab.start(), 240_000);

afterAll(() => lab.close(failed), 60_000);

test("the secondary replicates ACLs through the gateways; a primary's token works there until revoked", async () => {
  try {
    const all = lab.allWanNames();
    for (const dc of ["dc1", "dc2"]) await within(120_000, `every server alive in ${dc}'s WAN pool`, () => lab.wanAlive(dc), (v) => v.join() === all.join());
    const policy = (await as("dc1", ROOT, "PUT", "/v1/acl/policy", { Name: "app-kv", Rules: `key_prefix "app/" { policy = "write" }` })).json;
    const app = (await as("dc1", ROOT, "PUT", "/v1/acl/token", { Description: "app", Policies: [{ ID: policy.ID }] })).json;
    expect(app.SecretID).toBeString();

    await within(60_000, "dc2 replicates the app token", () => as("dc2", ROOT, "GET", `/v1/acl/token/${app.AccessorID}`), (r) => r.status === 200);
    // Policies, roles and tokens replicate in loops of their own (as in Consul): the token can be here
    // before the policy loop's first round has ended, so the status is awaited, not read once.
    const status = (await within(30_000, "dc2's replication status with policy and token indexes", () => as("dc2", ROOT, "GET", "/v1/acl/replication"),
      (r) => r.json?.ReplicatedIndex > 0 && r.json?.ReplicatedTokenIndex > 0)).json;
    expect(status).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: "dc1", ReplicationType: "tokens" });

    expect((await as("dc2", app.SecretID, "PUT", "/v1/kv/app/x", "2")).json).toBe(true);
    expect((await as("dc2", app.SecretID, "PUT", "/v1/kv/other", "2")).status).toBe(403);
    expect((await as("dc2", "", "GET", "/v1/kv/app/x")).status).toBe(403);
    // A read of the primary, forwarded from dc2 through the gateways with the request's token.
    expect((await as("dc1", ROOT, "PUT", "/v1/kv/app/y", "1")).json).toBe(true);
    expect((await as("dc2", app.SecretID, "GET", "/v1/kv/app/y?dc=dc1&raw")).text).toBe("1");
    expect((await as("dc2", app.SecretID, "GET", "/v1/kv/other?dc=dc1")).status).toBe(403);

    expect((await as("dc1", ROOT, "DELETE", `/v1/acl/token/${app.AccessorID}`)).json).toBe(true);
    const refused = await within(60_000, "the revoked token refused in dc2", () => as("dc2", app.SecretID, "GET", "/v1/kv/app/x"), (r) => r.status === 403);
    expect(refused.text).toBe("ACL not found\n");
  } catch (err) {
    failed = true;
    throw err;
  }
}, 300_000);
