/**
 * How the gossip driver logs the core's failure-detection notices: memberlist's levels and wording
 * ("Suspect X has failed, no acks received", "Marking X as failed, suspect timeout reached", "Refuting a
 * suspect message"), in Causeway's key=value form. Pure, so the wording is tested as a function.
 */
import type { LogFields, Logger } from "../platform/index.ts";
import type { MemberNotice } from "./types.ts";

export interface NoticeLine {
  readonly level: "info" | "warn";
  readonly msg: string;
  readonly fields: LogFields;
}

export function noticeLine(n: MemberNotice): NoticeLine {
  switch (n.type) {
    case "probe-failed":
      return { level: "info", msg: "suspect has failed, no acks received", fields: { member: n.node } };
    case "probe-stream-only":
      return { level: "warn", msg: "was able to connect to member but other probes failed, network may be misconfigured", fields: { member: n.node } };
    case "suspect-timeout":
      return { level: "info", msg: "marking member as failed, suspect timeout reached", fields: { member: n.node, peer_confirmations: n.confirmations } };
    case "refute":
      return { level: "warn", msg: `refuting ${n.accusation === "alive" ? "an alive" : `a ${n.accusation}`} message`, fields: n.from === "" ? {} : { from: n.from } };
  }
}

export function logNotices(log: Logger, notices: readonly MemberNotice[]): void {
  for (const n of notices) {
    const line = noticeLine(n);
    log[line.level](line.msg, line.fields);
  }
}
