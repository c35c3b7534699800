/**
 * Shape checks for the `prepared-query` and `autopilot` commands (and their snapshot rows). Each decoder
 * takes the parsed command object, checks the type of every field the store and its readers rely on, and
 * returns the command with Go's nil fields as null, or throws StateCommandError naming the path. Semantic
 * checks (name conflicts, sessions, templates) are the store's and the proposer's.
 */
import { StateCommandError, type StateCommand } from "./commands.ts";
import { checkRequired, checkShape, isObj, reqIndex, reqStr, type Obj } from "./codec_shapes.ts";

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

function obj(o: Obj, k: string, path: string): Obj {
  const v = o[k];
  if (!isObj(v)) bad(`${path}.${k}`, "must be an object");
  return v;
}

const nullable = (o: Obj, keys: readonly string[]): Obj => Object.fromEntries(keys.map((k) => [k, o[k] ?? null]));

/** A prepared query as a command (or a snapshot row) carries it; returns it with nil fields as null. */
export function preparedQueryShape(v: unknown, path: string): Obj {
  if (!isObj(v)) bad(path, "must be an object");
  checkRequired(v, path, { ID: "str", Name: "str", Session: "str", Token: "str" });
  checkShape(v, path, { CreateIndex: "num", ModifyIndex: "num" });
  const t = obj(v, "Template", path);
  checkRequired(t, `${path}.Template`, { Type: "str", Regexp: "str", RemoveEmptyTags: "bool" });
  const s = obj(v, "Service", path);
  checkRequired(s, `${path}.Service`, { Service: "str", OnlyPassing: "bool", Near: "str", Connect: "bool" });
  checkShape(s, `${path}.Service`, { IgnoreCheckIDs: "strArr", Tags: "strArr", NodeMeta: "strMap", ServiceMeta: "strMap" });
  const f = obj(s, "Failover", `${path}.Service`);
  reqIndex(f, "NearestN", `${path}.Service.Failover`);
  checkShape(f, `${path}.Service.Failover`, { Datacenters: "strArr" });
  const dns = obj(v, "DNS", path);
  checkRequired(dns, `${path}.DNS`, { TTL: "str" });
  return {
    ...v,
    Template: { Type: t.Type, Regexp: t.Regexp, RemoveEmptyTags: t.RemoveEmptyTags },
    Service: {
      Service: s.Service,
      Failover: { NearestN: f.NearestN, Datacenters: f.Datacenters ?? null },
      OnlyPassing: s.OnlyPassing,
      ...nullable(s, ["IgnoreCheckIDs"]),
      Near: s.Near,
      ...nullable(s, ["Tags", "NodeMeta", "ServiceMeta"]),
      Connect: s.Connect,
    },
    DNS: { TTL: dns.TTL },
  };
}

/** A `prepared-query` command. */
export function decodePreparedQueryCommand(raw: Obj): StateCommand {
  if (raw.op === "delete") {
    reqStr(raw, "id", "prepared-query");
    return { type: "prepared-query", op: "delete", id: raw.id as string };
  }
  if (raw.op !== "create" && raw.op !== "update") bad("prepared-query.op", "must be create, update or delete");
  const query = preparedQueryShape(raw.query, "prepared-query.query");
  const { CreateIndex: _c, ModifyIndex: _m, ...rest } = query;
  return { type: "prepared-query", op: raw.op, query: rest } as unknown as StateCommand;
}

/** An autopilot configuration as a command (or a snapshot) carries it. */
export function autopilotConfigShape(v: unknown, path: string): void {
  if (!isObj(v)) bad(path, "must be an object");
  checkRequired(v, path, {
    CleanupDeadServers: "bool", LastContactThresholdMs: "num", MaxTrailingLogs: "num", MinQuorum: "num",
    ServerStabilizationTimeMs: "num", RedundancyZoneTag: "str", DisableUpgradeMigration: "bool", UpgradeVersionTag: "str",
  });
  for (const k of ["LastContactThresholdMs", "MaxTrailingLogs", "MinQuorum", "ServerStabilizationTimeMs"]) reqIndex(v, k, path);
  checkShape(v, path, { CreateIndex: "num", ModifyIndex: "num" });
}

/** An `autopilot` command. */
export function decodeAutopilotCommand(raw: Obj): StateCommand {
  if (raw.op !== "set-config") bad("autopilot.op", "must be set-config");
  autopilotConfigShape(raw.config, "autopilot.config");
  const c = raw.config as Obj;
  const config = {
    CleanupDeadServers: c.CleanupDeadServers, LastContactThresholdMs: c.LastContactThresholdMs, MaxTrailingLogs: c.MaxTrailingLogs,
    MinQuorum: c.MinQuorum, ServerStabilizationTimeMs: c.ServerStabilizationTimeMs, RedundancyZoneTag: c.RedundancyZoneTag,
    DisableUpgradeMigration: c.DisableUpgradeMigration, UpgradeVersionTag: c.UpgradeVersionTag,
  };
  if (raw.cas === undefined) return { type: "autopilot", op: "set-config", config } as StateCommand;
  return { type: "autopilot", op: "set-config", config, cas: reqIndex(raw, "cas", "autopilot") } as StateCommand;
}
