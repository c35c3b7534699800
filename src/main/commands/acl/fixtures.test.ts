/** Shared helpers for the `causeway acl` tests (no tests here): the CLI against a real in-process ACL cluster. */
import { aclCluster } from "../../../../test/harness/acl_cluster.ts";
import { createAclCommand } from "../acl.ts";

/** Runs `causeway acl <argv>` with `env` added and `stdin` as standard input (empty by default). */
export type Run = (argv: string[], env?: Record<string, string>, stdin?: string) => Promise<{ code: number; out: string; err: string }>;

type Cluster = Awaited<ReturnType<typeof aclCluster>>;

/**
 * `causeway acl` against a fresh cluster with ACLs on (default deny), not bootstrapped; `tokens` are the
 * agent's tokens, `call` the cluster's HTTP API.
 */
export async function aclCli(): Promise<{ run: Run; tokens: Cluster["tokens"]; call: Cluster["call"] }> {
  const c = await aclCluster();
  const run: Run = async (argv, env = {}, stdin = "") => {
    let out = "", err = "";
    const deps = { env: () => ({ CONSUL_HTTP_ADDR: "http://agent", ...env }), fetch: async (url: string, init: unknown) => await c.fetch(url, init as RequestInit), readStdin: async () => new TextEncoder().encode(stdin) };
    const code = await createAclCommand(deps).run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
    return { code, out, err };
  };
  return { run, tokens: c.tokens, call: c.call };
}

/** A pretty output's `Name:   value` field. */
export const field = (out: string, name: string) => new RegExp(`^${name}:\\s+(.*)$`, "m").exec(out)?.[1];

/** A bootstrapped cluster; `run` sends the management token (`secret`). */
export async function managedCli(): Promise<{ run: Run; secret: string; tokens: Cluster["tokens"]; call: Cluster["call"] }> {
  const { run, tokens, call } = await aclCli();
  const boot = await run(["bootstrap"]);
  if (boot.code !== 0) throw new Error(`bootstrap failed: ${boot.err}`);
  const secret = field(boot.out, "SecretID")!;
  return { run: (argv, extra = {}, stdin) => run(argv, { CONSUL_HTTP_TOKEN: secret, ...extra }, stdin), secret, tokens, call };
}

/** `create ...` in `kind` (policy, role, token), expecting success; the new object's ID (AccessorID for tokens). */
export async function created(run: Run, kind: "policy" | "role" | "token", ...args: string[]): Promise<string> {
  const r = await run([kind, "create", "-format", "json", ...args]);
  if (r.code !== 0) throw new Error(`${kind} create failed: ${r.err}`);
  const obj = JSON.parse(r.out) as { ID?: string; AccessorID?: string };
  return (obj.AccessorID ?? obj.ID)!;
}
