/**
 * The nemesis's clients: real HTTP requests to random servers, recorded as a history for the
 * linearizability checker (test/harness/linearizability.ts, the per-key register model).
 *
 * - get: `GET /v1/kv/<key>?consistent` (the linearizable read mode);
 * - put: `PUT /v1/kv/<key>` with a value unique to the run;
 * - cas: `PUT /v1/kv/<key>?cas=<ModifyIndex>` with the index this client last read for the key
 *   (0: "only if absent"). Values are unique, so "the index is unchanged" is "the value is still the
 *   one read": the model's cas(expected = that value).
 *
 * A write whose answer never came (timeout, reset, 5xx) has an unknown outcome (returnTime Infinity);
 * one whose connection was refused never reached a server and is left out, as is a read without an
 * answer (it changed nothing). Writes use a fresh connection each, so "refused" is trustworthy (see
 * the PUT below).
 */
import type { Rng } from "../../src/platform/index.ts";
import type { KvInput, KvOutput, Operation } from "../harness/linearizability.ts";

export interface WorkloadTarget {
  readonly size: number;
  url(i: number): string;
}

export interface WorkloadStats {
  ok: number;
  failed: number;
  unknown: number;
}

/** A write left out of the history as "it did not happen", with why (to check that reasoning after a failure). */
export interface DroppedWrite {
  readonly clientId: number;
  readonly input: KvInput;
  readonly callTime: number;
  readonly reason: string;
}

export interface Workload {
  readonly history: Operation<KvInput, KvOutput>[];
  readonly dropped: DroppedWrite[];
  readonly stats: WorkloadStats;
  /** Stops issuing operations and waits for those under way. */
  stop(): Promise<void>;
}

const decodeValue = (b64: string | null): string => (b64 === null ? "" : Buffer.from(b64, "base64").toString("utf8"));

/** Starts `clients` clients on keys `k0..k<keys-1>`; times are ms since `t0` (performance.now()). */
export function startWorkload(o: {
  target: WorkloadTarget; clients: number; keys: number; rng: Rng; opTimeoutMs: number; t0: number;
  /** "consistent" (default) or, for the broken variant the checker must catch, "stale" (any server's local copy). */
  readMode?: "consistent" | "stale";
}): Workload {
  const history: Operation<KvInput, KvOutput>[] = [];
  const dropped: DroppedWrite[] = [];
  const stats: WorkloadStats = { ok: 0, failed: 0, unknown: 0 };
  let stopped = false;
  let unique = 0;
  const now = () => performance.now() - o.t0;

  const client = async (id: number) => {
    // What this client last read per key: the CAS basis.
    const seen = new Map<string, { value: string | undefined; index: number }>();
    while (!stopped) {
      const key = `k${o.rng.int(o.keys)}`;
      const server = o.target.url(o.rng.int(o.target.size));
      const r = o.rng.next();
      const signal = AbortSignal.timeout(o.opTimeoutMs);
      const callTime = now();
      if (r < 0.4) {
        try {
          const res = await fetch(`${server}/v1/kv/${key}?${o.readMode ?? "consistent"}`, { signal });
          if (res.status === 404) {
            await res.arrayBuffer();
            history.push({ clientId: id, input: { op: "get", key }, output: { value: undefined }, callTime, returnTime: now() });
            seen.set(key, { value: undefined, index: 0 });
            stats.ok++;
          } else if (res.ok) {
            const [e] = (await res.json()) as { Value: string | null; ModifyIndex: number }[];
            const value = decodeValue(e!.Value);
            history.push({ clientId: id, input: { op: "get", key }, output: { value }, callTime, returnTime: now() });
            seen.set(key, { value, index: e!.ModifyIndex });
            stats.ok++;
          } else {
            await res.arrayBuffer();
            stats.failed++;
          }
        } catch {
          stats.failed++;
        }
        continue;
      }
      const value = `c${id}-${unique++}`;
      const basis = seen.get(key) ?? { value: undefined, index: 0 };
      const input: KvInput = r < 0.7 ? { op: "put", key, value } : { op: "cas", key, expected: basis.value, value };
      const query = input.op === "cas" ? `?cas=${basis.index}` : "";
      try {
        // A fresh connection per write (keepalive: false): Bun's fetch silently resends a request whose
        // pooled keep-alive connection died before the answer, and reports the resend's ECONNREFUSED
        // although the first copy reached the server (measured: 41 of 63,000 refusals around a kill -9).
        // On a fresh connection a refusal means the server never saw the request.
        const res = await fetch(`${server}/v1/kv/${key}${query}`, { method: "PUT", body: value, signal, keepalive: false });
        const text = await res.text();
        if (res.ok && (text.trim() === "true" || text.trim() === "false")) {
          history.push({ clientId: id, input, output: input.op === "cas" ? { ok: text.trim() === "true" } : {}, callTime, returnTime: now() });
          stats.ok++;
          continue;
        }
        if (res.status >= 400 && res.status < 500) {
          // Refused before anything was proposed (bad request): it did not happen.
          dropped.push({ clientId: id, input, callTime, reason: `${res.status} ${text.slice(0, 200)}` });
          stats.failed++;
          continue;
        }
      } catch (err) {
        // Refused connection: the request never reached a server (it was down), so it did not happen.
        if ((err as { code?: string }).code === "ECONNREFUSED") {
          dropped.push({ clientId: id, input, callTime, reason: `${server}: ${String(err)}` });
          stats.failed++;
          continue;
        }
        // Otherwise no answer: unknown below.
      }
      history.push({ clientId: id, input, output: {}, callTime, returnTime: Infinity });
      stats.unknown++;
    }
  };

  const running = Array.from({ length: o.clients }, (_, i) => client(i));
  return {
    history,
    dropped,
    stats,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}
