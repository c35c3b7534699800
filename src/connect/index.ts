/**
 * The connect layer's public face: CA and leaf certificates, intentions, the discovery chain compiler and
 * bexpr filters. Everything here is pure: no clock, no randomness, no I/O.
 */
export * from "./bexpr/index.ts";
export * from "./ca/index.ts";
export * from "./config_entries/index.ts";
export * from "./discovery_chain/index.ts";
export * from "./intentions/index.ts";
export * from "./prepared_query/index.ts";
