/**
 * Consul's read options and response metadata for every read endpoint (agent/http.go parseWait,
 * parseConsistency, parseDC, setMeta; agent/consul/rpc.go blockingQuery for the wait limits).
 */
import type { Context } from "hono";
import { goUint64Of, parseDuration } from "../lib/index.ts";
import { query, requestToken } from "./request.ts";

export type Consistency = "default" | "stale" | "consistent";

export interface ReadOptions {
  /** `?dc=`, or undefined for the agent's own datacenter. */
  readonly datacenter: string | undefined;
  readonly consistency: Consistency;
  /** `?index=`: block until the result's index passes this (0: do not block). */
  readonly minIndex: number;
  /** How long the server may block: `?wait=` clamped to Consul's maximum, plus jitter; 0 when not blocking. */
  readonly maxWaitMs: number;
  /** Aborts when the client goes away: a blocking read then stops waiting and releases its watch. */
  readonly signal?: AbortSignal;
  /** The request's ACL token (requestToken), undefined when it carries none. */
  readonly token?: string;
}

/** Consul's defaults: a blocking query waits 5 minutes unless told otherwise, 10 at most (agent/consul/rpc.go). */
export const DEFAULT_WAIT_MS = 5 * 60_000;
export const MAX_WAIT_MS = 10 * 60_000;
/** The server adds up to wait/16 of random jitter so that many watchers do not return at once (structs.JitterFraction). */
export const JITTER_FRACTION = 16;

/** A request Consul would refuse with 400 and this message. */
export class BadRequestError extends Error {
  override readonly name = "BadRequestError";
}

/**
 * Parses `dc`, `stale`, `consistent`, `index` and `wait` with Consul's messages. `random` is a number in
 * [0, 1) for the jitter (injected so tests can pin it).
 */
export function parseReadOptions(c: Context, random: () => number): ReadOptions {
  const q = (name: string) => query(c, name);
  const stale = q("stale") !== undefined;
  const consistent = q("consistent") !== undefined;
  if (stale && consistent) throw new BadRequestError("Cannot specify ?stale with ?consistent, conflicting semantics.");
  let minIndex = 0;
  const index = q("index");
  if (index !== undefined && index !== "") {
    // Any uint64 is a valid index (Go's ParseUint). No stored index gets past 2^53, so a larger one
    // blocks exactly as 2^53 - 1 does: until the wait runs out.
    const n = goUint64Of(index);
    if (n === undefined) throw new BadRequestError("Invalid index");
    minIndex = typeof n === "bigint" ? Number.MAX_SAFE_INTEGER : n;
  }
  let waitMs = 0;
  const wait = q("wait");
  if (wait !== undefined && wait !== "") {
    try {
      waitMs = parseDuration(wait);
    } catch {
      throw new BadRequestError("Invalid wait time");
    }
  }
  let maxWaitMs = 0;
  if (minIndex > 0) {
    const base = waitMs > MAX_WAIT_MS ? MAX_WAIT_MS : waitMs <= 0 ? DEFAULT_WAIT_MS : waitMs;
    maxWaitMs = Math.round(base + random() * (base / JITTER_FRACTION));
  }
  const dc = q("dc");
  const token = requestToken(c);
  return {
    datacenter: dc ? dc : undefined, consistency: stale ? "stale" : consistent ? "consistent" : "default", minIndex, maxWaitMs, ...(token !== undefined ? { token } : {}),
  };
}

export interface QueryMeta {
  readonly index: number;
  readonly knownLeader: boolean;
  readonly lastContactMs: number;
}

/** Sets X-Consul-Index (at least 1), X-Consul-KnownLeader and X-Consul-LastContact (whole milliseconds). */
export function setQueryMeta(c: Context, meta: QueryMeta): void {
  c.header("X-Consul-Index", String(Math.max(1, meta.index)));
  c.header("X-Consul-KnownLeader", meta.knownLeader ? "true" : "false");
  c.header("X-Consul-LastContact", String(Math.max(0, Math.round(meta.lastContactMs))));
}
