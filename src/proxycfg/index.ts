/**
 * proxycfg: per-proxy snapshot state machines (typed events -> readonly snapshot). Public face.
 */
export { upstreamDatacenter, upstreamIdentifier } from "./snapshot.ts";
export type { ConnectProxySnapshot, SidecarSnapshot } from "./snapshot.ts";
