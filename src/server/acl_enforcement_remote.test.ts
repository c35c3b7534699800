/** A secondary's server resolving tokens it does not hold through the primary (acl_enforcement.ts `remote`). */
import { describe, expect, test } from "bun:test";
import { ConnectError } from "@connectrpc/connect";
import { AclResolveError, chainAuthorizers, parseRules, policyAuthorizer, staticAuthorizer, type TokenResolver } from "../acl/index.ts";
import { createStateStore, type StateCommand } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createAclEnforcement } from "./acl_enforcement.ts";

function secondary(tokenReplication: boolean) {
  const clock = simClock(Date.parse("2026-12-03T12:00:00Z"));
  const store = createStateStore({ clock });
  const asked: string[] = [];
  const resolver: TokenResolver = {
    async authorizer(secret) {
      asked.push(secret!);
      if (secret !== "primary-secret") throw new AclResolveError("ACL not found", 403);
      return chainAuthorizers([policyAuthorizer(parseRules(`key_prefix "app/" { policy = "write" }`)), staticAuthorizer("deny")]);
    },
  };
  const enforcement = createAclEnforcement({ store, datacenter: "dc2", defaultPolicy: "deny", defaultToken: () => "", enableKeyListPolicy: false, clock, remote: { resolver, tokenReplication } });
  const put = (Key: string): StateCommand => ({ type: "kv", op: "set", entry: { Key } });
  const code = async (p: Promise<unknown> | (() => unknown)) => {
    try {
      await (typeof p === "function" ? p() : p);
      return "ok";
    } catch (err) {
      return (err as ConnectError).rawMessage;
    }
  };
  return { store, enforcement, asked, put, code };
}

describe("a secondary's token resolution", () => {
  test("without token replication every token it does not hold is asked of the primary; the answer decides", async () => {
    const s = secondary(false);
    await s.enforcement.resolve("primary-secret");
    expect(await s.code(() => s.enforcement.checkCommand(s.put("app/x"), "primary-secret"))).toBe("ok");
    expect(await s.code(() => s.enforcement.checkCommand(s.put("other"), "primary-secret"))).toBe("Permission denied");
    expect(await s.code(s.enforcement.resolve("unknown"))).toBe("ACL not found");
    expect(await s.code(() => s.enforcement.authorizer("unknown"))).toBe("ACL not found");
    expect(s.asked).toEqual(["primary-secret", "unknown"]);
  });

  test("with token replication the primary is asked only until tokens have replicated", async () => {
    const s = secondary(true);
    await s.enforcement.resolve("primary-secret");
    expect(s.asked).toEqual(["primary-secret"]);
    s.store.apply(1, { type: "acl-token", op: "set", tokens: [{ AccessorID: "aaaaaaaa-0000-4000-8000-000000000001", SecretID: "replicated", Description: "", Local: false, CreateTime: "x", Hash: "h" }], allowMissingLinks: true });
    await s.enforcement.resolve("primary-secret");
    expect(s.asked).toEqual(["primary-secret"]); // tokens are here now: local answers are authoritative
    expect(await s.code(() => s.enforcement.authorizer("primary-secret"))).toBe("ACL not found");
    expect(await s.code(() => s.enforcement.authorizer("replicated"))).toBe("ok");
  });
});
