import { expect, test } from "bun:test";
import { Changer, restoreConfig } from "./confchange.ts";
import type { ConfigAndProgress } from "./confchange.ts";
import { ConfChangeError } from "./errors.ts";
import { describeConfig, emptyConfig } from "./tracker.ts";
import type { ConfChangeSingle, ConfChangeType } from "./types.ts";

function cc(spec: string): ConfChangeSingle[] {
  const kinds: Record<string, ConfChangeType> = { v: "AddNode", l: "AddLearnerNode", r: "RemoveNode" };
  return spec.split(" ").filter((s) => s).map((s) => ({ type: kinds[s[0]!]!, nodeId: s.slice(1) }));
}

class Sim {
  cur: ConfigAndProgress = { config: emptyConfig(), progress: new Map() };
  private changer() { return new Changer(this.cur.config, this.cur.progress, 10, 5); }
  simple(s: string) { this.cur = this.changer().simple(cc(s)); return describeConfig(this.cur.config); }
  enter(s: string, auto = false) { this.cur = this.changer().enterJoint(auto, cc(s)); return describeConfig(this.cur.config); }
  leave() { this.cur = this.changer().leaveJoint(); return describeConfig(this.cur.config); }
}

test("simple changes: one voter at a time; learners; promotion", () => {
  const s = new Sim();
  expect(s.simple("v1")).toBe("voters=(1)");
  expect(s.simple("v2")).toBe("voters=(1 2)");
  expect(s.simple("l3")).toBe("voters=(1 2) learners=(3)");
  expect(s.simple("v3")).toBe("voters=(1 2 3)"); // promotion keeps Progress
  expect(s.cur.progress.get("3")!.isLearner).toBe(false);
  expect(s.simple("l3")).toBe("voters=(1 2) learners=(3)"); // demotion
  expect(s.simple("r3")).toBe("voters=(1 2)");
  expect(s.cur.progress.has("3")).toBe(false);
  expect(() => s.simple("v3 v4")).toThrow(ConfChangeError);
  expect(() => s.simple("r1 r2")).toThrow(/removed all voters|more than one voter/);
  expect(s.simple("r2 l2")).toBe("voters=(1) learners=(2)"); // one voter changed
});

test("joint: enter, learnersNext for demoted outgoing voters, leave", () => {
  const s = new Sim();
  s.simple("v1"); s.simple("v2"); s.simple("v3");
  expect(() => s.leave()).toThrow(/non-joint/);
  expect(s.enter("r1 v4 l3", true)).toBe("voters=(2 4)&&(1 2 3) learners_next=(3) autoleave");
  expect(s.cur.progress.has("1")).toBe(true); // still an outgoing voter
  expect(() => s.enter("v5")).toThrow(/already joint/);
  expect(() => s.simple("v5")).toThrow(/joint/);
  expect(s.leave()).toBe("voters=(2 4) learners=(3)");
  expect(s.cur.progress.has("1")).toBe(false);
  expect(s.cur.progress.get("3")!.isLearner).toBe(true);
});

test("restore from ConfState replays simple and joint configs", () => {
  const plain = restoreConfig({ voters: ["1", "2"], learners: ["3"], votersOutgoing: [], learnersNext: [], autoLeave: false }, 10, 7);
  expect(describeConfig(plain.config)).toBe("voters=(1 2) learners=(3)");
  expect(plain.progress.get("3")!.next).toBe(7);
  const joint = restoreConfig({ voters: ["1", "2", "3"], learners: ["5"], votersOutgoing: ["1", "2", "4", "6"], learnersNext: ["4"], autoLeave: true }, 10, 7);
  expect(describeConfig(joint.config)).toBe("voters=(1 2 3)&&(1 2 4 6) learners=(5) learners_next=(4) autoleave");
});
