/** Shared helpers for the `causeway acl` tests (no tests here): the CLI against a real in-process ACL cluster. */
import { aclCluster } from "../../../../test/harness/acl_cluster.ts";
import { createAclCommand } from "../acl.ts";

export type Run = (argv: string[], env?: Record<string, string>) => Promise<{ code: number; out: string; err: string }>;

/** `causeway acl` against a fresh cluster with ACLs on (default deny), not bootstrapped. */
export async function aclCli(): Promise<{ run: Run }> {
  const c = await aclCluster();
  const run: Run = async (argv, env = {}) => {
    let out = "", err = "";
    const code = await createAclCommand({ env: () => ({ CONSUL_HTTP_ADDR: "http://agent", ...env }), fetch: async (url, init) => await c.fetch(url, init as RequestInit), readStdin: async () => new Uint8Array() })
      .run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
    return { code, out, err };
  };
  return { run };
}

/** A pretty output's `Name:   value` field. */
export const field = (out: string, name: string) => new RegExp(`^${name}:\\s+(.*)$`, "m").exec(out)?.[1];

/** A bootstrapped cluster; `run` sends the management token. */
export async function managedCli(): Promise<{ run: Run }> {
  const { run } = await aclCli();
  const boot = await run(["bootstrap"]);
  if (boot.code !== 0) throw new Error(`bootstrap failed: ${boot.err}`);
  const env = { CONSUL_HTTP_TOKEN: field(boot.out, "SecretID")! };
  return { run: (argv, extra = {}) => run(argv, { ...env, ...extra }) };
}

/** `create ...` in `kind` (policy, role, token), expecting success; the new object's ID (AccessorID for tokens). */
export async function created(run: Run, kind: "policy" | "role" | "token", ...args: string[]): Promise<string> {
  const r = await run([kind, "create", "-format", "json", ...args]);
  if (r.code !== 0) throw new Error(`${kind} create failed: ${r.err}`);
  const obj = JSON.parse(r.out) as { ID?: string; AccessorID?: string };
  return (obj.AccessorID ?? obj.ID)!;
}
