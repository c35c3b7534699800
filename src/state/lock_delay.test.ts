import { describe, expect, test } from "bun:test";
import type { StateCommand } from "./commands.ts";
import { acquiresLock } from "./lock_delay.ts";

describe("acquiresLock", () => {
  test("a KV lock and a txn with a lock op acquire; other writes do not", () => {
    const kv = (op: string) => ({ type: "kv", op, entry: { Key: "k" } }) as unknown as StateCommand;
    const txn = (...verbs: string[]) => ({ type: "txn", ops: verbs.map((Verb) => ({ KV: { Verb, Key: "k" } })) }) as unknown as StateCommand;
    expect([kv("lock"), kv("set"), kv("unlock"), kv("cas")].map(acquiresLock)).toEqual([true, false, false, false]);
    expect([txn("set", "lock"), txn("get", "unlock"), txn()].map(acquiresLock)).toEqual([true, false, false]);
    expect(acquiresLock({ type: "session", op: "destroy", id: "s" } as unknown as StateCommand)).toBe(false);
  });
});
