/**
 * Node and service maintenance mode (Consul's Agent.EnableNodeMaintenance / EnableServiceMaintenance):
 * a critical check with the reason as Notes keeps the node or service out of healthy query results.
 */
import type { Logger } from "../platform/index.ts";
import { notFound } from "./errors.ts";
import type { LocalCheck, LocalState } from "./local_state.ts";
import { emptyCheckType } from "./convert.ts";
import type { CheckType } from "./types.ts";

/** Consul's structs.NodeMaint. */
export const NODE_MAINTENANCE_CHECK_ID = "_node_maintenance";
/** Consul's structs.ServiceMaintPrefix; the check ID is the prefix plus the service ID. */
export const SERVICE_MAINTENANCE_PREFIX = "_service_maintenance:";

const DEFAULT_NODE_REASON = "Maintenance mode is enabled for this node, but no reason was provided. This is a default message.";
const DEFAULT_SERVICE_REASON = "Maintenance mode is enabled for this service, but no reason was provided. This is a default message.";

/** A persisted maintenance mode: `serviceId` "" is the node's. `reason` as given (possibly empty). */
export interface MaintenanceRecord {
  readonly serviceId: string;
  readonly reason: string;
}

export interface Maintenance {
  /** Puts a service in maintenance (idempotent). Throws AgentError("not-found") `No service registered with ID "x"`. */
  enableServiceMaintenance(serviceId: string, reason: string): void;
  /** Takes a service out of maintenance (no-op if it is not in maintenance). Throws AgentError("not-found") for an unknown service. */
  disableServiceMaintenance(serviceId: string): void;
  /** Puts the node in maintenance (idempotent). */
  enableNodeMaintenance(reason: string): void;
  disableNodeMaintenance(): void;
}

/** The maintenance operations over the agent's add/remove primitives. */
export function maintenance(o: {
  state: LocalState;
  nodeName: string;
  addCheck: (check: LocalCheck, type: CheckType) => unknown;
  removeCheck: (checkId: string) => unknown;
  /** Keeps a maintenance check across restarts (Consul persists it like any API-added check); removal goes through removeCheck. */
  persist?: (checkId: string, record: MaintenanceRecord) => void;
  logger: Logger;
}): Maintenance {
  const serviceOrThrow = (id: string) => {
    const s = o.state.service(id);
    if (!s) throw notFound(`No service registered with ID ${JSON.stringify(id)}`);
    return s;
  };
  return {
    enableServiceMaintenance(serviceId, reason) {
      const s = serviceOrThrow(serviceId);
      const checkId = SERVICE_MAINTENANCE_PREFIX + serviceId;
      if (o.state.check(checkId)) return;
      o.addCheck({
        Node: o.nodeName, CheckID: checkId, Name: "Service Maintenance Mode", Status: "critical",
        Notes: reason || DEFAULT_SERVICE_REASON, Output: "", ServiceID: s.ID, ServiceName: s.Service,
        ServiceTags: s.Tags, Type: "maintenance", Definition: {},
      }, emptyCheckType());
      o.persist?.(checkId, { serviceId, reason });
      o.logger.info("service entered maintenance mode", { service: serviceId });
    },
    disableServiceMaintenance(serviceId) {
      serviceOrThrow(serviceId);
      const checkId = SERVICE_MAINTENANCE_PREFIX + serviceId;
      if (!o.state.check(checkId)) return;
      o.removeCheck(checkId);
      o.logger.info("service left maintenance mode", { service: serviceId });
    },
    enableNodeMaintenance(reason) {
      if (o.state.check(NODE_MAINTENANCE_CHECK_ID)) return;
      o.addCheck({
        Node: o.nodeName, CheckID: NODE_MAINTENANCE_CHECK_ID, Name: "Node Maintenance Mode", Status: "critical",
        Notes: reason || DEFAULT_NODE_REASON, Output: "", ServiceID: "", ServiceName: "", ServiceTags: null,
        Type: "maintenance", Definition: {},
      }, emptyCheckType());
      o.persist?.(NODE_MAINTENANCE_CHECK_ID, { serviceId: "", reason });
      o.logger.info("node entered maintenance mode");
    },
    disableNodeMaintenance() {
      if (!o.state.check(NODE_MAINTENANCE_CHECK_ID)) return;
      o.removeCheck(NODE_MAINTENANCE_CHECK_ID);
      o.logger.info("node left maintenance mode");
    },
  };
}
