import { describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { ConnectError, Code } from "@connectrpc/connect";
import { plainRpcError } from "../rpc/index.ts";
import { requestToken } from "./request.ts";
import { errorResponse } from "./respond.ts";

describe("the ACL token of a request", () => {
  test("?token=, else X-Consul-Token, else Authorization: Bearer; the first non-empty wins", async () => {
    const app = new Hono().get("/t", (c) => c.text(String(requestToken(c))));
    const token = async (path: string, headers: Record<string, string> = {}) => (await app.request(path, { headers })).text();
    expect(await token("/t?token=q", { "X-Consul-Token": "h", Authorization: "Bearer b" })).toBe("q");
    expect(await token("/t?token=", { "X-Consul-Token": "h" })).toBe("h");
    expect(await token("/t", { Authorization: "bEaReR   b1 extra" })).toBe("b1");
    expect(await token("/t", { Authorization: "Basic xyz" })).toBe("undefined");
    expect(await token("/t")).toBe("undefined");
  });

  test("an ACL refusal from a server answers 403 with its words, as Consul's", async () => {
    const app = new Hono().get("/e", (c) => errorResponse(c, plainRpcError(new ConnectError("ACL not found", Code.PermissionDenied))));
    const res = await app.request("/e");
    expect([res.status, await res.text()]).toEqual([403, "ACL not found\n"]);
  });
});
