/**
 * `causeway acl auth-method`, `binding-rule` and `set-agent-token` end to end against a real `causeway
 * agent -dev` with ACLs on (default deny, a master token), over loopback HTTP. Creates a kubernetes and a
 * jwt auth method and a binding rule, lists, reads, updates and deletes them, and sets agent tokens
 * whose effect the agent then shows. The steps that read stdin or first reach a group run the CLI as a
 * process of its own (from cli.ts); the others run the same command in this process (a process start
 * costs about a second). Every process started here is stopped by pid in a finally block.
 */
import { expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "../../../../test/harness/agent_process.ts";
import { createAclCommand } from "../acl.ts";

const CLI = fileURLToPath(new URL("../../cli.ts", import.meta.url));
const ROOT = "7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
const CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIRAJ\n-----END CERTIFICATE-----\n";

/** Kills what is still running of `procs`, each by its pid. */
function killAll(procs: readonly ChildProcess[]): void {
  for (const p of procs) {
    if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) continue;
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

test("auth methods, binding rules and agent tokens through the CLI against a real ACL agent", async () => {
  const work = mkdtempSync(join(tmpdir(), "cw-acl-cli-e2e-"));
  const procs: ChildProcess[] = [];
  let agent: AgentProcess | undefined;
  try {
    writeFileSync(join(work, "acl.json"), JSON.stringify({ acl: { enabled: true, default_policy: "deny", tokens: { master: ROOT } } }));
    writeFileSync(join(work, "ca.crt"), CA);
    agent = await startAgentProcess(process.execPath, [
      CLI, "agent", "-dev", "-config-file", join(work, "acl.json"), "-bind", "127.0.0.1",
      "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
    ]);
    procs.push(agent.child);
    const http = agent.httpUrl;
    await poll(() => agentCall(http, "GET", "/v1/acl/token/self", ROOT), (r) => r.status === 200, 20_000, "the master token");

    type Result = { code: number | null; out: string; err: string };
    /** `causeway acl <argv>` as a process, with the master token unless `token` says otherwise. */
    const aclProcess = (argv: string[], stdin = "", token = ROOT) =>
      new Promise<Result>((resolve) => {
        const proc = spawn(process.execPath, [CLI, "acl", ...argv], { env: { ...process.env, CONSUL_HTTP_ADDR: http, CONSUL_HTTP_TOKEN: token }, stdio: ["pipe", "pipe", "pipe"] });
        procs.push(proc);
        let out = "", err = "";
        proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
        proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
        proc.once("close", (code) => resolve({ code, out, err }));
        proc.stdin!.end(stdin);
      });
    /** The same command in this process, over real HTTP. */
    const acl = async (argv: string[], stdin = "", token = ROOT): Promise<Result> => {
      let out = "", err = "";
      const deps = { env: () => ({ CONSUL_HTTP_ADDR: http, CONSUL_HTTP_TOKEN: token }), readStdin: async () => new TextEncoder().encode(stdin) };
      const code = await createAclCommand(deps).run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
      return { code, out, err };
    };

    // Auth methods: kubernetes from its flags (the CA cert from a file), jwt from -config on stdin.
    const k8s = await aclProcess(["auth-method", "create", "-type", "kubernetes", "-name", "k8s", "-description", "the cluster", "-kubernetes-host", "https://k8s.example.com:6443",
      "-kubernetes-ca-cert", `@${join(work, "ca.crt")}`, "-kubernetes-service-account-jwt", "eyJhbGciOi.x.y"]);
    expect(k8s).toEqual({
      code: 0, err: "",
      out: `Name:          k8s\nType:          kubernetes\nDescription:   the cluster\nConfig:\n{\n  "CACert": ${JSON.stringify(CA)},\n  "Host": "https://k8s.example.com:6443",\n  "ServiceAccountJWT": "eyJhbGciOi.x.y"\n}\n`,
    });
    const jwt = await aclProcess(["auth-method", "create", "-type", "jwt", "-name", "jwt", "-max-token-ttl", "10m", "-config", "-", "-format", "json"], '{"BoundIssuer":"https://issuer","ClaimMappings":{"team":"team"}}');
    expect(jwt.code).toBe(0);
    expect(JSON.parse(jwt.out)).toEqual({ MaxTokenTTL: "10m0s", Name: "jwt", Type: "jwt", Config: { BoundIssuer: "https://issuer", ClaimMappings: { team: "team" } }, CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) });

    expect(await acl(["auth-method", "list"])).toEqual({ code: 0, out: "jwt:\n   Type:         jwt\n   Description:  \nk8s:\n   Type:         kubernetes\n   Description:  the cluster\n\n", err: "" });
    expect((await acl(["auth-method", "read", "-name", "k8s", "-meta"])).out).toMatch(/^Name: {10}k8s\nType: {10}kubernetes\nDescription: {3}the cluster\nCreate Index: {2}\d+\nModify Index: {2}\d+\nConfig:\n/);
    const updated = await acl(["auth-method", "update", "-name", "k8s", "-description", "renamed", "-kubernetes-host", "https://k8s-2.example.com:6443", "-format", "json"]);
    expect(JSON.parse(updated.out)).toMatchObject({ Name: "k8s", Description: "renamed", Config: { Host: "https://k8s-2.example.com:6443", CACert: CA, ServiceAccountJWT: "eyJhbGciOi.x.y" } });

    // A binding rule on the kubernetes method.
    const created = await aclProcess(["binding-rule", "create", "-method", "k8s", "-bind-name", "${serviceaccount.name}", "-selector", "serviceaccount.namespace==default", "-description", "pods"]);
    expect(created.code).toBe(0);
    const id = /^ID: +(\S+)\n/.exec(created.out)![1]!;
    expect(created.out).toBe(`ID:           ${id}\nAuthMethod:   k8s\nDescription:  pods\nBindType:     service\nBindName:     \${serviceaccount.name}\nSelector:     serviceaccount.namespace==default\n\n`);
    expect(JSON.parse((await acl(["binding-rule", "list", "-method", "k8s", "-format", "json"])).out)).toMatchObject([{ ID: id, AuthMethod: "k8s", BindType: "service" }]);
    expect(await acl(["binding-rule", "list", "-method", "jwt"])).toEqual({ code: 0, out: "", err: "" });
    expect(await acl(["binding-rule", "read", "-id", id.slice(0, 6)])).toEqual(created);
    const retyped = await acl(["binding-rule", "update", "-id", id.slice(0, 6), "-bind-type", "role", "-bind-name", "k8s-admins"]);
    expect(retyped.out).toContain("\nBindType:     role\nBindName:     k8s-admins\nSelector:     serviceaccount.namespace==default\n");
    expect(await acl(["binding-rule", "delete", "-id", id.slice(0, 8)])).toEqual({ code: 0, out: `Binding rule "${id}" deleted successfully\n`, err: "" });
    expect((await agentCall(http, "GET", "/v1/acl/binding-rules", ROOT)).json).toEqual([]);

    expect(await acl(["auth-method", "delete", "-name", "k8s"])).toEqual({ code: 0, out: 'Auth method "k8s" deleted successfully\n', err: "" });
    expect(await acl(["auth-method", "read", "-name", "k8s"])).toEqual({ code: 1, out: "", err: 'Auth method not found with name "k8s"\n' });
    expect(JSON.parse((await acl(["auth-method", "list", "-format", "json"])).out).map((m: { Name: string }) => m.Name)).toEqual(["jwt"]);
    // Without a token (anonymous, default deny) the agent refuses.
    expect(await acl(["auth-method", "list"], "", "")).toEqual({ code: 1, out: "", err: "Failed to retrieve the auth method list: Unexpected response code: 403 (Permission denied)\n" });

    // Agent tokens: master answers the agent API; default is used for requests without a token.
    const master = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    expect((await agentCall(http, "GET", "/v1/agent/self", master)).status).toBe(403);
    expect(await aclProcess(["set-agent-token", "master", "-"], `${master}`)).toEqual({ code: 0, out: 'ACL token "master" set successfully\n', err: "" });
    expect((await agentCall(http, "GET", "/v1/agent/self", master)).status).toBe(200);
    expect((await agentCall(http, "GET", "/v1/acl/auth-methods")).status).toBe(403);
    expect(await acl(["set-agent-token", "default", ROOT])).toEqual({ code: 0, out: 'ACL token "default" set successfully\n', err: "" });
    expect((await agentCall(http, "GET", "/v1/acl/auth-methods")).json.map((m: { Name: string }) => m.Name)).toEqual(["jwt"]);
    expect(await acl(["set-agent-token", "agent", "x"], "", "")).toEqual({ code: 0, out: 'ACL token "agent" set successfully\n', err: "" }); // the default token now answers
  } finally {
    killAll(procs);
    rmSync(work, { recursive: true, force: true });
  }
}, 120_000);
