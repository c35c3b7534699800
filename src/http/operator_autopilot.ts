/**
 * Autopilot operator endpoints (Consul 1.8's agent/operator_endpoint.go OperatorAutopilotConfiguration
 * and OperatorServerHealth): GET and PUT /v1/operator/autopilot/configuration (`?cas=`) and GET
 * /v1/operator/autopilot/health. Consul 1.8 has no /v1/operator/autopilot/state (it came in 1.9).
 */
import type { Context, Hono } from "hono";
import type { AutopilotConfig } from "../model/index.ts";
import { decodeGoStruct, formatGoDuration, GoError, goUint64Of, parseGoDuration, parseGoJson, struct, type GoType, type JsonValue } from "../lib/index.ts";
import { readBodyText } from "./body.ts";
import type { AutopilotHealthApi, StateAccess } from "./deps.ts";
import { BadRequestError, parseReadOptions } from "./query_options.ts";
import { messageOf, stateRefusal, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query, requestToken } from "./request.ts";

/** What the autopilot routes need: the replicated state (configuration) and the leader's health. */
export interface OperatorAutopilotDeps {
  readonly state?: StateAccess;
  readonly autopilot?: AutopilotHealthApi;
  readonly random?: () => number;
}

/** The configuration as PUT carries it, before it is written (no indexes). */
export type AutopilotConfigBody = Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">;

const NS_PER_MS = 1_000_000;
/** Go's largest time.Duration (2^63-1 ns), as the nearest float. */
const MAX_DURATION_NS = 2 ** 63;
const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** api.ReadableDuration's UnmarshalJSON: a Go duration string, or a number of nanoseconds. */
const readableDuration: GoType = {
  custom: {
    goName: "api.ReadableDuration",
    decode(v: JsonValue) {
      if (typeof v === "string") return parseGoDuration(v);
      if (typeof v === "number") return Math.trunc(v);
      throw new GoError(`strconv.ParseFloat: parsing ${JSON.stringify(JSON.stringify(v))}: invalid syntax`);
    },
  },
};

const CONFIG_BODY = struct("api.AutopilotConfiguration", {
  CleanupDeadServers: "bool",
  LastContactThreshold: readableDuration,
  MaxTrailingLogs: "uint64",
  MinQuorum: "uint64",
  ServerStabilizationTime: readableDuration,
  RedundancyZoneTag: "string",
  DisableUpgradeMigration: "bool",
  UpgradeVersionTag: "string",
  CreateIndex: "uint64",
  ModifyIndex: "uint64",
}).struct;

/**
 * Decodes a PUT body as Consul decodes api.AutopilotConfiguration: fields match in any letter case,
 * unknown ones are ignored, and a field left out is Go's zero value (false, 0, ""), not the stored
 * value. Throws BadRequestError "Error parsing autopilot config: ..." with Go's text for a bad body.
 * Beyond Consul: a negative duration, and a count past 2^53 - 1, are refused too.
 */
export function parseAutopilotConfigBody(body: string): AutopilotConfigBody {
  let raw: Record<string, unknown>;
  try {
    // Go's json.Decoder reads an empty body as io.EOF.
    if (body.trim() === "") throw new GoError("EOF");
    raw = decodeGoStruct<Record<string, unknown>>(parseGoJson(body), CONFIG_BODY);
  } catch (err) {
    throw new BadRequestError(`Error parsing autopilot config: ${messageOf(err)}`);
  }
  const count = (field: string): number => {
    const v = raw[field] ?? 0;
    if (typeof v !== "number" || !Number.isSafeInteger(v)) throw new BadRequestError(`Error parsing autopilot config: ${field} ${String(v)} is too large (at most ${Number.MAX_SAFE_INTEGER})`);
    return v;
  };
  // Go's time.Duration is an int64 of nanoseconds; the state keeps whole milliseconds, so a sub-millisecond
  // remainder rounds up (a threshold never shrinks to 0 by the conversion).
  const duration = (field: string): number => {
    const ns = (raw[field] as number | undefined) ?? 0;
    if (!Number.isFinite(ns) || ns > MAX_DURATION_NS) throw new BadRequestError(`Error parsing autopilot config: ${field} is out of range (at most 2562047h47m16.854775807s)`);
    if (ns < 0) throw new BadRequestError(`Error parsing autopilot config: ${field} must not be negative, got ${formatGoDuration(ns)}`);
    return Math.ceil(ns / NS_PER_MS);
  };
  return {
    CleanupDeadServers: (raw["CleanupDeadServers"] as boolean | undefined) ?? false,
    LastContactThresholdMs: duration("LastContactThreshold"),
    MaxTrailingLogs: count("MaxTrailingLogs"),
    MinQuorum: count("MinQuorum"),
    ServerStabilizationTimeMs: duration("ServerStabilizationTime"),
    RedundancyZoneTag: (raw["RedundancyZoneTag"] as string | undefined) ?? "",
    DisableUpgradeMigration: (raw["DisableUpgradeMigration"] as boolean | undefined) ?? false,
    UpgradeVersionTag: (raw["UpgradeVersionTag"] as string | undefined) ?? "",
  };
}

/** The configuration in api.AutopilotConfiguration's JSON shape (durations as Go duration strings). */
export function autopilotConfigJson(c: AutopilotConfig): unknown {
  return {
    CleanupDeadServers: c.CleanupDeadServers,
    LastContactThreshold: formatGoDuration(c.LastContactThresholdMs * NS_PER_MS),
    MaxTrailingLogs: c.MaxTrailingLogs,
    MinQuorum: c.MinQuorum,
    ServerStabilizationTime: formatGoDuration(c.ServerStabilizationTimeMs * NS_PER_MS),
    RedundancyZoneTag: c.RedundancyZoneTag,
    DisableUpgradeMigration: c.DisableUpgradeMigration,
    UpgradeVersionTag: c.UpgradeVersionTag,
    CreateIndex: c.CreateIndex,
    ModifyIndex: c.ModifyIndex,
  };
}

/** Go's time.Time JSON for StableSince as Consul writes it: rounded to the second, UTC. */
function stableSinceJson(ms: number | undefined): string {
  if (ms === undefined) return GO_ZERO_TIME;
  return new Date(Math.round(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** api.OperatorHealthReply: Servers null when there are none (a nil slice), LastContact "-1ns" when unknown. */
export function operatorHealthJson(h: Awaited<ReturnType<AutopilotHealthApi["serverHealth"]>>): unknown {
  return {
    Healthy: h.healthy,
    FailureTolerance: h.failureTolerance,
    Servers: h.servers.length === 0 ? null : h.servers.map((s) => ({
      ID: s.id,
      Name: s.name,
      Address: s.address,
      SerfStatus: s.serfStatus,
      Version: s.version,
      Leader: s.leader,
      LastContact: s.lastContactMs === undefined ? "-1ns" : formatGoDuration(Math.round(s.lastContactMs * NS_PER_MS)),
      LastTerm: s.lastTerm,
      LastIndex: s.lastIndex,
      Healthy: s.healthy,
      Voter: s.voter,
      StableSince: stableSinceJson(s.stableSinceMs),
    })),
  };
}

const CONFIG_PATH = "/v1/operator/autopilot/configuration";
const NOT_INITIALIZED = "autopilot config not initialized yet";

/** Mounts the autopilot routes; a missing dependency answers 500 with what is unavailable. */
export function mountOperatorAutopilot(app: Hono, deps: OperatorAutopilotDeps): void {
  const readOptions = (c: Context) => parseReadOptions(c, deps.random ?? (() => 0.5));

  app.get(CONFIG_PATH, async (c) => {
    try {
      // Consul's AutopilotGetConfiguration is not a blocking query: ?index= does not wait.
      const options = { ...readOptions(c), minIndex: 0, maxWaitMs: 0 };
      if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
      const { value } = await deps.state.read({ type: "autopilot-config" }, options);
      const config = value as AutopilotConfig | null;
      if (!config) return textError(c, 500, NOT_INITIALIZED);
      return jsonResponse(c, autopilotConfigJson(config));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.put(CONFIG_PATH, async (c) => {
    let cas: number | undefined;
    let config: AutopilotConfigBody;
    try {
      config = parseAutopilotConfigBody(await readBodyText(c));
      const rawCas = query(c, "cas");
      if (rawCas !== undefined) {
        const n = goUint64Of(rawCas);
        if (n === undefined) throw new BadRequestError(`Error parsing cas value: strconv.ParseUint: parsing ${JSON.stringify(rawCas)}: invalid syntax`);
        // No stored index reaches 2^53: a larger one can never match, as 2^53 - 1 cannot.
        cas = typeof n === "bigint" ? Number.MAX_SAFE_INTEGER : n;
      }
    } catch (err) {
      return errorResponse(c, err);
    }
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    try {
      const result = await deps.state.write({ type: "autopilot", op: "set-config", config, ...(cas === undefined ? {} : { cas }) }, query(c, "dc") || undefined, requestToken(c));
      if (result.type === "error") return stateRefusal(c, result.error);
      // Only a CAS answers its outcome; a plain write answers true (Consul's OperatorAutopilotConfiguration).
      return jsonResponse(c, result.type === "cas" ? result.ok : true);
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.get("/v1/operator/autopilot/health", async (c) => {
    try {
      const { datacenter } = readOptions(c);
      if (!deps.autopilot) return textError(c, 500, "Autopilot health is not available on this agent");
      const health = await deps.autopilot.serverHealth(datacenter, requestToken(c));
      // Consul answers 429 while anything is unhealthy (the body is the same).
      return jsonResponse(c, operatorHealthJson(health), health.healthy ? 200 : 429);
    } catch (err) {
      return errorResponse(c, err);
    }
  });
}
