/**
 * Centralized service configuration (proxy-defaults and service-defaults folded into a Proxy block). The
 * pure functions live in src/connect (config_entries/service_config.ts), where the local agent's service
 * manager uses them too; re-exported here so proxycfg's machines keep their import.
 */
export { isServiceUpstream, mergeServiceConfig, resolveServiceConfig, type ResolvedServiceConfig } from "../connect/index.ts";
