import { describe, expect, test } from "bun:test";
import { createLogger } from "../platform/index.ts";
import { logNotices, noticeLine } from "./notice_log.ts";

describe("gossip notices in the log", () => {
  test("memberlist's levels and wording", () => {
    expect(noticeLine({ type: "probe-failed", node: "b.dc2" })).toEqual({ level: "info", msg: "suspect has failed, no acks received", fields: { member: "b.dc2" } });
    expect(noticeLine({ type: "suspect-timeout", node: "b.dc2", confirmations: 2 }))
      .toEqual({ level: "info", msg: "marking member as failed, suspect timeout reached", fields: { member: "b.dc2", peer_confirmations: 2 } });
    expect(noticeLine({ type: "refute", accusation: "suspect", from: "c.dc1" })).toEqual({ level: "warn", msg: "refuting a suspect message", fields: { from: "c.dc1" } });
    expect(noticeLine({ type: "refute", accusation: "dead", from: "c.dc1" }).msg).toBe("refuting a dead message");
    expect(noticeLine({ type: "refute", accusation: "alive", from: "" })).toEqual({ level: "warn", msg: "refuting an alive message", fields: {} });
  });

  test("each notice is one line at its level", () => {
    const lines: string[] = [];
    const log = createLogger("serf-wan", { level: "info", sink: (l) => lines.push(l) });
    logNotices(log, [{ type: "probe-failed", node: "b" }, { type: "refute", accusation: "suspect", from: "c" }]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/\[INFO\] serf-wan: suspect has failed, no acks received member=b$/);
    expect(lines[1]).toMatch(/\[WARN\] serf-wan: refuting a suspect message from=c$/);
  });
});
