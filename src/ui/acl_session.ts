/**
 * Who is reading an ACL page: the login cookie's token as `/v1/acl/token/self` sees it (read as that
 * token), and whether it may write ACLs (acl_access.ts mayWriteAcls over its linked policies and
 * roles, read with the same token). ACLs off, no token and a refused token are states, not errors;
 * any other failure (an unknown datacenter...) throws for the page's failure answer.
 */
import type { Context } from "hono";
import { mayWriteAcls, refusalOf, type PolicyView, type RoleView, type TokenView } from "./acl_access.ts";
import type { UiContext } from "./page.ts";

export interface AclSession {
  readonly dc: string;
  /** The login cookie's token (undefined: none; reads use the agent's default token). */
  readonly token: string | undefined;
  /** off: ACLs disabled; none: no token (or the default token unknown); refused: the cookie's token is not accepted. */
  readonly state: "off" | "none" | "refused" | "ok";
  readonly self?: TokenView;
  /** Whether write buttons and forms are shown. */
  readonly canWrite: boolean;
}

export async function aclSession(ctx: UiContext, c: Context, dc: string): Promise<AclSession> {
  const token = ctx.token(c);
  let self: TokenView;
  try {
    self = (await ctx.read<TokenView>("/v1/acl/token/self", dc, token)).value;
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal === "off") return { dc, token, state: "off", canWrite: false };
    if (refusal === "not-found" || refusal === "denied") return { dc, token, state: token === undefined ? "none" : "refused", canWrite: false };
    throw err;
  }
  return { dc, token, state: "ok", self, canWrite: await writeRights(ctx, dc, token, self) };
}

/** Reads what `self` links to (what cannot be read grants nothing) and evaluates acl:write. */
async function writeRights(ctx: UiContext, dc: string, token: string | undefined, self: TokenView): Promise<boolean> {
  if (mayWriteAcls(self, () => undefined, () => undefined, dc)) return true;
  const readOr = async <T>(path: string): Promise<T | undefined> => {
    try {
      return (await ctx.read<T>(path, dc, token)).value ?? undefined;
    } catch {
      return undefined;
    }
  };
  const roles = new Map<string, RoleView>();
  for (const l of self.Roles ?? []) {
    const r = await readOr<RoleView>(`/v1/acl/role/${encodeURIComponent(l.ID)}`);
    if (r) roles.set(l.ID, r);
  }
  const policyIds = new Set([...(self.Policies ?? []), ...[...roles.values()].flatMap((r) => r.Policies ?? [])].map((l) => l.ID));
  const policies = new Map<string, PolicyView>();
  for (const id of policyIds) {
    const p = await readOr<PolicyView>(`/v1/acl/policy/${encodeURIComponent(id)}`);
    if (p) policies.set(id, p);
  }
  return mayWriteAcls(self, (id) => policies.get(id), (id) => roles.get(id), dc);
}
