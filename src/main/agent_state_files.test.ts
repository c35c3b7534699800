import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCheckRegistration, parseServiceRegistration } from "../agent/index.ts";
import { memoryLogger } from "../platform/index.ts";
import { agentStateFiles } from "./agent_state_files.ts";

describe("agent state files", () => {
  test("save, load and remove services, checks and TTL states; a damaged file is skipped with a warning", () => {
    const dir = mkdtempSync(join(tmpdir(), "cw-agent-state-"));
    try {
      const logger = memoryLogger("debug");
      const files = agentStateFiles(dir, logger);
      const web = parseServiceRegistration({ Name: "web", ID: "web/1 é", Port: 80, Tags: ["a"] });
      const mem = parseCheckRegistration({ Name: "mem", TTL: "30s" });
      files.saveService("web/1 é", web, "web-secret");
      files.saveCheck("mem", mem, "");
      files.saveCheckState("mem", { status: "warning", output: "low", expiresAtMs: 123 });
      files.saveMaintenance("_service_maintenance:web/1 é", { serviceId: "web/1 é", reason: "upgrade" });
      writeFileSync(join(dir, "services", "garbage.json"), "{not json");
      const loaded = agentStateFiles(dir, logger).load();
      expect(loaded.services).toEqual([JSON.parse(JSON.stringify(web))]);
      expect(loaded.checks).toEqual([JSON.parse(JSON.stringify(mem))]);
      expect([...loaded.checkStates]).toEqual([["mem", { status: "warning", output: "low", expiresAtMs: 123 }]]);
      expect(loaded.maintenance).toEqual([{ serviceId: "web/1 é", reason: "upgrade" }]);
      expect(loaded.tokens).toEqual({ services: new Map([["web/1 é", "web-secret"]]), checks: new Map() });
      expect(logger.lines.some((l) => l.includes("garbage.json"))).toBe(true);
      files.removeService("web/1 é");
      files.removeCheck("mem");
      files.removeCheck("_service_maintenance:web/1 é");
      files.removeCheck("never-saved");
      expect([readdirSync(join(dir, "services")), readdirSync(join(dir, "checks")).filter((n) => n.endsWith(".json")), readdirSync(join(dir, "checks", "state"))])
        .toEqual([["garbage.json"], [], []]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
