/**
 * The platform layer's public face: ports (types) and their implementations for Bun and Deno.
 * Runtime globals (Bun, Deno, process, timers, Date.now, Math.random) are allowed only here and in src/main.
 */
export * from "./clock.ts";
export * from "./rng.ts";
export * from "./logger.ts";
export * from "./storage.ts";
export * from "./files.ts";
export * from "./http.ts";
export type * from "./http_types.ts";
export * from "./tcp.ts";
export * from "./tls.ts";
export * from "./mux.ts";
export * from "./http2.ts";
export * from "./udp.ts";
export * from "./streams.ts";
export * from "./probes.ts";
export * from "./record_dir.ts";
export * from "./process.ts";
export * from "./grpc_health.ts";
export * from "./docker.ts";
export * from "./host_network.ts";
