/**
 * Session-based locks under the nemesis (Consul's `consul lock` recipe): a client creates a session
 * on a random server, acquires `PUT /v1/kv/<lock>?acquire=<session>`, holds it briefly, and releases
 * it. A hold runs from the acquire's answer to the release's call (what the client believes), so a
 * slow release never stretches it.
 *
 * An acquire or release without an answer abandons the session (see the client loop).
 *
 * The property (checkLockHolds): never two holders at once. Holds are far shorter than the lock-delay
 * (15 s, Consul's default), so a holder whose session was invalidated behind its back (its node
 * killed or cut off) cannot be overlapped by the next holder within its hold.
 */
import type { Rng } from "../../src/platform/index.ts";
import type { WorkloadTarget } from "./workload.ts";

export interface LockHold {
  readonly client: number;
  readonly lock: string;
  /** ms since t0: the acquire's answer; the release's call. */
  readonly from: number;
  readonly to: number;
  /** For reading a violation against the servers' logs: the session, the server asked, the call time. */
  readonly session?: string;
  readonly via?: number;
  readonly called?: number;
  /** What a consistent read of the lock key said during the hold (holder session, LockIndex), if it answered. */
  readonly seen?: { readonly session: string; readonly lockIndex: number };
}

export interface LockStats {
  acquired: number;
  refused: number;
  errors: number;
  sessions: number;
}

/** Pairs of holds of one lock by different clients that overlap in time; none means the checker passes. */
export function checkLockHolds(holds: readonly LockHold[]): [LockHold, LockHold][] {
  const bad: [LockHold, LockHold][] = [];
  const byLock = new Map<string, LockHold[]>();
  for (const h of holds) byLock.set(h.lock, [...(byLock.get(h.lock) ?? []), h]);
  for (const list of byLock.values()) {
    const sorted = [...list].sort((a, b) => a.from - b.from);
    let widest: LockHold | undefined;
    for (const h of sorted) {
      if (widest && h.from < widest.to && h.client !== widest.client) bad.push([widest, h]);
      if (!widest || h.to > widest.to) widest = h;
    }
  }
  return bad;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `clients` lock clients on `locks` locks; `stop()` resolves with every completed hold. */
export function startLockClients(o: { target: WorkloadTarget; clients: number; locks: number; rng: Rng; opTimeoutMs: number; t0: number }) {
  const holds: LockHold[] = [];
  const stats: LockStats = { acquired: 0, refused: 0, errors: 0, sessions: 0 };
  let stopped = false;
  const now = () => performance.now() - o.t0;
  const call = async (url: string, init?: RequestInit) => {
    // A fresh connection per call: Bun's fetch resends a request whose pooled connection died, which
    // would apply an acquire or release twice (see workload.ts).
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(o.opTimeoutMs), keepalive: false });
    const text = await res.text();
    if (!res.ok) throw new Error(`${res.status} ${text}`);
    return text;
  };

  const client = async (id: number) => {
    let session: string | undefined;
    let via = 0;
    const server = () => o.target.url((via = o.rng.int(o.target.size)));
    while (!stopped) {
      let sent = false;
      try {
        if (!session) {
          const created = JSON.parse(await call(`${server()}/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: `nemesis-${id}`, Behavior: "release" }) })) as { ID: string };
          session = created.ID;
          stats.sessions++;
        }
        const lock = `lock${o.rng.int(o.locks)}`;
        const called = now();
        sent = true;
        const acquired = (await call(`${server()}/v1/kv/${lock}?acquire=${session}`, { method: "PUT", body: `c${id}` })).trim() === "true";
        sent = false;
        if (!acquired) {
          stats.refused++;
          await sleep(50 + o.rng.int(100));
          continue;
        }
        const from = now();
        const acquiredVia = via;
        stats.acquired++;
        const holdMs = 50 + o.rng.int(150);
        // The server's view of the hold, for reading a violation (a consistent read, as `consul lock`
        // watches its lock); a read that fails leaves it out, the hold stands.
        let seen: LockHold["seen"];
        try {
          const [e] = JSON.parse(await call(`${server()}/v1/kv/${lock}?consistent`)) as { Session?: string; LockIndex: number }[];
          seen = { session: e?.Session ?? "", lockIndex: e?.LockIndex ?? -1 };
        } catch {
          // no view
        }
        await sleep(Math.max(0, holdMs - (now() - from)));
        holds.push({ client: id, lock, from, to: now(), session, via: acquiredVia, called, seen });
        sent = true;
        await call(`${server()}/v1/kv/${lock}?release=${session}`, { method: "PUT" });
        sent = false;
      } catch (err) {
        stats.errors++;
        // An acquire or release without an answer may still take effect later: its proposal can reach
        // the leader when a partition heals, seconds after the client gave up (seen: a release sent to
        // a server cut off at that moment, applied 7.6 s later, ended this session's next hold of the
        // lock). So the session is abandoned: destroyed, which releases what it holds (under
        // lock-delay), and the next attempt uses a fresh one that no late request names, as
        // `consul lock` uses a session per lock. A session already gone ("invalid session") likewise.
        if (session && (sent || /invalid session/i.test(String(err)))) {
          await abandon(session);
          session = undefined;
        }
        await sleep(100);
      }
    }
  };

  /** Destroys a session, asking up to three servers; one left behind only starves its locks. */
  const abandon = async (session: string) => {
    for (let attempt = 0; attempt < 3 && !stopped; attempt++) {
      try {
        await call(`${o.target.url(o.rng.int(o.target.size))}/v1/session/destroy/${session}`, { method: "PUT" });
        return;
      } catch {
        stats.errors++;
      }
    }
  };

  const running = Array.from({ length: o.clients }, (_, i) => client(1000 + i));
  return {
    holds,
    stats,
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(running);
    },
  };
}
