/**
 * The agent's API registrations across restarts, in the data dir as Consul keeps them: one file per
 * service in `services/`, per check in `checks/`, and per TTL check status in `checks/state/`, each
 * named by the SHA-256 of the ID (IDs may hold any character). Writes are durable (fsync, atomic
 * replace); a file that does not parse is skipped with a warning naming it, never fatal.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { AgentPersistence, CheckRegistration, PersistedAgentState, PersistedCheckState, ServiceRegistration } from "../agent/index.ts";
import { readFileIfExists, writeFileDurably, type Logger } from "../platform/index.ts";

const fileOf = (dir: string, id: string) => join(dir, `${bytesToHex(sha256(new TextEncoder().encode(id)))}.json`);

export interface AgentStateFiles extends AgentPersistence {
  /** What the files hold now (services, checks, TTL check states). */
  load(): PersistedAgentState;
}

export function agentStateFiles(dataDir: string, logger: Logger): AgentStateFiles {
  const services = join(dataDir, "services");
  const checks = join(dataDir, "checks");
  const states = join(checks, "state");
  const write = (path: string, value: unknown) => {
    try {
      writeFileDurably(path, JSON.stringify(value), 0o600);
    } catch (err) {
      logger.error("failed to persist agent state", { file: path, error: err });
    }
  };
  const remove = (path: string) => rmSync(path, { force: true });
  const read = <T>(dir: string, pick: (doc: Record<string, unknown>) => T | undefined): T[] => {
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith(".json"));
    } catch {
      return [];
    }
    return names.sort().flatMap((name) => {
      const file = join(dir, name);
      try {
        const value = pick(JSON.parse(new TextDecoder().decode(readFileIfExists(file) ?? new Uint8Array())) as Record<string, unknown>);
        if (value === undefined) throw new Error("unexpected shape");
        return [value];
      } catch (err) {
        logger.warn("skipping a persisted agent state file that does not parse", { file, error: err });
        return [];
      }
    });
  };
  return {
    saveService: (id, reg) => write(fileOf(services, id), { ID: id, Service: reg }),
    removeService: (id) => remove(fileOf(services, id)),
    saveCheck: (id, reg) => write(fileOf(checks, id), { ID: id, Check: reg }),
    removeCheck: (id) => {
      remove(fileOf(checks, id));
      remove(fileOf(states, id));
    },
    saveCheckState: (id, s) => write(fileOf(states, id), { CheckID: id, Status: s.status, Output: s.output, Expires: s.expiresAtMs }),
    load: () => ({
      services: read(services, (d) => (d.Service && typeof d.Service === "object" ? (d.Service as ServiceRegistration) : undefined)),
      checks: read(checks, (d) => (d.Check && typeof d.Check === "object" ? (d.Check as CheckRegistration) : undefined)),
      checkStates: new Map(read(states, (d): [string, PersistedCheckState] | undefined =>
        typeof d.CheckID === "string" && typeof d.Expires === "number" && (d.Status === "passing" || d.Status === "warning" || d.Status === "critical")
          ? [d.CheckID, { status: d.Status, output: typeof d.Output === "string" ? d.Output : "", expiresAtMs: d.Expires }]
          : undefined)),
    }),
  };
}
