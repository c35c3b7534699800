import { expect, test } from "bun:test";
import { seededRng } from "../platform/rng.ts";
import { validateConfig } from "./config.ts";
import type { Config } from "./config.ts";
import { ConfigError } from "./errors.ts";
import { MemoryStorage } from "./storage.ts";

const base: Config = { id: "a", electionTick: 10, heartbeatTick: 1, maxInflightMsgs: 8, storage: new MemoryStorage(), rng: seededRng(1) };

test("valid config gets defaults", () => {
  const c = validateConfig(base);
  expect(c.readOnlyOption).toBe("Safe");
  expect(c.preVote).toBe(false);
  expect(c.applied).toBe(0);
});

test("invalid configs are rejected with clear errors", () => {
  const bad: [Partial<Config>, RegExp][] = [
    [{ id: "" }, /empty string as id/],
    [{ electionTick: 1 }, /electionTick must be greater than heartbeatTick/],
    [{ heartbeatTick: 0 }, /heartbeatTick must be a positive integer/],
    [{ maxInflightMsgs: 0 }, /maxInflightMsgs/],
    [{ readOnlyOption: "LeaseBased" }, /checkQuorum must be enabled/],
    [{ maxSizePerMsg: -1 }, /maxSizePerMsg/],
  ];
  for (const [patch, re] of bad) {
    expect(() => validateConfig({ ...base, ...patch })).toThrow(ConfigError);
    expect(() => validateConfig({ ...base, ...patch })).toThrow(re);
  }
});
