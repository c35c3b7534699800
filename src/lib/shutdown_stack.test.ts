import { describe, expect, test } from "bun:test";
import { shutdownStack } from "./shutdown_stack.ts";

describe("shutdown stack", () => {
  test("runs steps once, last pushed first, awaiting each; a failing step does not stop the rest", async () => {
    const log: string[] = [];
    const errors: unknown[] = [];
    const stack = shutdownStack((err) => errors.push(err));
    stack.push(() => log.push("a"));
    stack.push(async () => {
      await Promise.resolve();
      log.push("b");
    });
    stack.push(() => {
      throw new Error("c failed");
    });
    stack.push(() => log.push("d"));
    await stack.stopAll();
    await stack.stopAll();
    expect(log).toEqual(["d", "b", "a"]);
    expect(errors.map((e) => (e as Error).message)).toEqual(["c failed"]);
  });
});
