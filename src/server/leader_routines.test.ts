import { describe, expect, test } from "bun:test";
import { silentLogger } from "../platform/index.ts";
import { createLeaderRunner, type LeaderRoutine } from "./leader_routines.ts";

function recording(name: string, log: string[], failOn?: "start" | "stop"): LeaderRoutine {
  return {
    name,
    start() {
      log.push(`start ${name}`);
      if (failOn === "start") throw new Error("boom");
    },
    stop() {
      log.push(`stop ${name}`);
      if (failOn === "stop") throw new Error("boom");
    },
  };
}

describe("leader routine runner", () => {
  test("starts in order on gaining leadership, stops in reverse on losing it, ignores repeats", () => {
    const log: string[] = [];
    const runner = createLeaderRunner([recording("a", log), recording("b", log), recording("c", log)], silentLogger());
    runner.setLeader(false);
    expect(log).toEqual([]);
    runner.setLeader(true);
    runner.setLeader(true);
    expect(runner.leader).toBe(true);
    runner.setLeader(false);
    expect(runner.leader).toBe(false);
    expect(log).toEqual(["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
  });

  test("a routine that throws does not keep the others from starting or stopping", () => {
    const log: string[] = [];
    const runner = createLeaderRunner([recording("a", log, "start"), recording("b", log, "stop"), recording("c", log)], silentLogger());
    runner.setLeader(true);
    runner.setLeader(false);
    expect(log).toEqual(["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
  });
});
