/**
 * The agent's API registrations across restarts, laid out in the data dir as Consul keeps them:
 * `services/`, `checks/` and `checks/state/` (TTL check statuses), one record per ID. A maintenance
 * mode is a record in `checks/` under its check ID with `Maintenance` in place of `Check`. A
 * registration's ACL token is kept in its record as `Token`, as Consul's persistedService does (the
 * records are written readable by the owner only).
 */
import { join } from "node:path";
import type { AgentPersistence, CheckRegistration, MaintenanceRecord, PersistedAgentState, PersistedCheckState, ServiceRegistration } from "../agent/index.ts";
import { openRecordDir, type Logger } from "../platform/index.ts";

export interface AgentStateFiles extends AgentPersistence {
  /** What the files hold now; records of the wrong shape are skipped with a warning. */
  load(): PersistedAgentState;
}

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === "object" && v !== null && !Array.isArray(v);
const isStatus = (s: unknown): s is PersistedCheckState["status"] => s === "passing" || s === "warning" || s === "critical";

export function agentStateFiles(dataDir: string, logger: Logger): AgentStateFiles {
  const report = (what: string, file: string, error: unknown) => logger.warn(`agent state file: ${what}`, { file, error });
  const services = openRecordDir(join(dataDir, "services"), report);
  const checks = openRecordDir(join(dataDir, "checks"), report);
  const states = openRecordDir(join(dataDir, "checks", "state"), report);
  const pick = <T>(records: unknown[], of: (d: Doc) => T | undefined): T[] =>
    records.flatMap((r) => {
      const v = isDoc(r) ? of(r) : undefined;
      if (v === undefined) logger.warn("agent state file: skipping a record of the wrong shape");
      return v === undefined ? [] : [v];
    });
  const checkRecords = () => checks.list();
  const isMaintenance = (d: Doc) => isDoc(d.Maintenance);
  return {
    saveService: (id, reg, token) => services.save(id, { ID: id, Service: reg, ...(token ? { Token: token } : {}) }),
    removeService: (id) => services.remove(id),
    saveCheck: (id, reg, token) => checks.save(id, { ID: id, Check: reg, ...(token ? { Token: token } : {}) }),
    removeCheck: (id) => {
      checks.remove(id);
      states.remove(id);
    },
    saveMaintenance: (id, m) => checks.save(id, { ID: id, Maintenance: { ServiceID: m.serviceId, Reason: m.reason } }),
    saveCheckState: (id, s) => states.save(id, { CheckID: id, Status: s.status, Output: s.output, Expires: s.expiresAtMs }),
    load: () => ({
      services: pick(services.list(), (d) => (isDoc(d.Service) ? (d.Service as unknown as ServiceRegistration) : undefined)),
      checks: pick(checkRecords().filter((r) => !(isDoc(r) && isMaintenance(r))), (d) => (isDoc(d.Check) ? (d.Check as unknown as CheckRegistration) : undefined)),
      maintenance: pick(checkRecords().filter((r) => isDoc(r) && isMaintenance(r)), (d): MaintenanceRecord | undefined => {
        const m = d.Maintenance as Doc;
        return typeof m.ServiceID === "string" && typeof m.Reason === "string" ? { serviceId: m.ServiceID, reason: m.Reason } : undefined;
      }),
      checkStates: new Map(pick(states.list(), (d): [string, PersistedCheckState] | undefined =>
        typeof d.CheckID === "string" && typeof d.Expires === "number" && isStatus(d.Status)
          ? [d.CheckID, { status: d.Status, output: typeof d.Output === "string" ? d.Output : "", expiresAtMs: d.Expires }]
          : undefined)),
      tokens: {
        services: tokensOf(services.list()),
        checks: tokensOf(checkRecords()),
      },
    }),
  };
}

/** The `Token` of each record that has one, by its `ID`. */
function tokensOf(records: unknown[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of records) if (isDoc(r) && typeof r.ID === "string" && typeof r.Token === "string" && r.Token !== "") out.set(r.ID, r.Token);
  return out;
}
