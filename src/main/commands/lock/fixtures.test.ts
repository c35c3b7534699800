/**
 * Shared helpers for the `causeway lock` tests (no tests here): an in-memory agent that answers the
 * session and KV API as a fetch function (blocking reads wait for a change or their `wait` on a
 * simulated clock), fake child processes and signals, and a harness that runs the command over them
 * so that a test steps through a run without real time passing.
 */
import { stringifyExact, toBase64 } from "../../../lib/index.ts";
import { flushMacrotask, runSimTimers, simClock, type SimClock } from "../../../../test/harness/sim_clock.ts";
import type { FetchFn } from "../support/http_client.ts";
import { createLockCommand } from "../lock.ts";
import type { ChildExit, ChildSignal, ChildSpec, RunningChild, SpawnChild } from "./child.ts";

interface Entry {
  value: Uint8Array;
  flags: bigint;
  session: string;
  createIndex: number;
  modifyIndex: number;
  lockIndex: number;
}

export interface FakeSession {
  readonly id: string;
  readonly body: Record<string, unknown>;
}

export interface FakeAgent {
  readonly fetch: FetchFn;
  /** Every request as `METHOD /path?query`, in arrival order. */
  readonly lines: string[];
  /** The request bodies, by the same position. */
  readonly bodies: string[];
  readonly kv: Map<string, Entry>;
  readonly sessions: Map<string, FakeSession>;
  /** Keys whose acquire is refused while listed (a lock-delay). */
  readonly lockDelay: Set<string>;
  /** The Raft-like index: bumped by every write. */
  index(): number;
  /** Blocking reads now waiting. */
  waiting(): number;
  /** Answers the next `times` requests whose line matches with `status` and `body`. */
  fail(match: RegExp, status: number, body: string, times?: number): void;
  /** Runs `fn` once, before answering the first request whose line matches (to interleave another client). */
  before(match: RegExp, fn: () => void): void;
  /** When true, requests fail as a refused connection does. */
  down: boolean;
  /** Writes as another client would. */
  put(key: string, value: string, o?: { flags?: bigint; session?: string }): void;
  deleteKey(key: string): void;
  createSession(name?: string, behavior?: string): string;
  destroySession(id: string): void;
}

/** The value of a key as text, or undefined. */
export const valueOf = (agent: FakeAgent, key: string): string | undefined => {
  const e = agent.kv.get(key);
  return e ? new TextDecoder().decode(e.value) : undefined;
};

export function fakeAgent(clock: SimClock): FakeAgent {
  let idx = 0;
  let sessionSeq = 0;
  const kv = new Map<string, Entry>();
  const sessions = new Map<string, FakeSession>();
  const watchers = new Set<() => void>();
  const failures: Array<{ match: RegExp; status: number; body: string; times: number }> = [];
  const hooks: Array<{ match: RegExp; fn: () => void }> = [];
  /** Moves the index on and wakes the blocked reads (they answer after the caller's change is done). */
  const bump = () => {
    idx++;
    for (const w of [...watchers]) w();
    return idx;
  };
  const json = (body: unknown, status = 200) => new Response(stringifyExact(body), { status, headers: { "Content-Type": "application/json", "X-Consul-Index": String(idx) } });
  const text = (body: string, status = 200) => new Response(body, { status, headers: { "X-Consul-Index": String(idx) } });
  const entryJson = (key: string, e: Entry) => ({
    LockIndex: e.lockIndex, Key: key, Flags: e.flags, Value: e.value.length ? toBase64(e.value) : null, ...(e.session ? { Session: e.session } : {}),
    CreateIndex: e.createIndex, ModifyIndex: e.modifyIndex,
  });
  const write = (key: string, value: Uint8Array, flags: bigint, session: string) => {
    const old = kv.get(key);
    const at = idx + 1;
    kv.set(key, { value, flags, session, createIndex: old?.createIndex ?? at, modifyIndex: at, lockIndex: (old?.lockIndex ?? 0) + (session && old?.session !== session ? 1 : 0) });
    bump();
  };
  const remove = (key: string) => {
    if (kv.delete(key)) bump();
  };
  const destroySession = (id: string) => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    for (const [key, e] of [...kv]) {
      if (e.session !== id) continue;
      if (s.body.Behavior === "delete") kv.delete(key);
      else kv.set(key, { ...e, session: "" });
    }
    bump();
  };
  const block = (query: URLSearchParams) => {
    const index = query.get("index");
    if (index === null || Number(index) < idx) return Promise.resolve();
    const wait = /^(\d+)ms$/.exec(query.get("wait") ?? "");
    return new Promise<void>((resolve) => {
      const done = () => {
        watchers.delete(done);
        cancel();
        resolve();
      };
      const cancel = clock.setTimer(wait ? Number(wait[1]) : 300_000, done);
      watchers.add(done);
    });
  };

  async function kvRoute(method: string, key: string, query: URLSearchParams, body: Uint8Array): Promise<Response> {
    const flags = query.has("flags") ? BigInt(query.get("flags")!) : 0n;
    if (method === "GET") {
      await block(query);
      if (query.has("recurse")) {
        const found = [...kv].filter(([k]) => k.startsWith(key)).sort(([a], [b]) => (a < b ? -1 : 1));
        return found.length ? json(found.map(([k, e]) => entryJson(k, e))) : text("", 404);
      }
      const e = kv.get(key);
      return e ? json([entryJson(key, e)]) : text("", 404);
    }
    const e = kv.get(key);
    if (method === "DELETE") {
      if (query.has("cas") && e?.modifyIndex !== Number(query.get("cas"))) return text("false");
      remove(key);
      return text("true");
    }
    if (query.has("acquire")) {
      const session = query.get("acquire")!;
      if (!sessions.has(session)) return text(`invalid session "${session}"`, 500);
      if ((e && e.session !== "" && e.session !== session) || agent.lockDelay.has(key)) return text("false");
      write(key, body, flags, session);
      return text("true");
    }
    if (query.has("release")) {
      if (!e || e.session !== query.get("release")) return text("false");
      write(key, e.value, flags, "");
      return text("true");
    }
    if (query.has("cas") && (e?.modifyIndex ?? 0) !== Number(query.get("cas"))) return text("false");
    write(key, body, flags, e?.session ?? "");
    return text("true");
  }

  async function route(method: string, path: string, query: URLSearchParams, body: Uint8Array): Promise<Response> {
    if (method === "GET" && path === "/v1/agent/self") return json({ Config: { NodeName: "node-1", Datacenter: "dc1" } });
    if (method === "PUT" && path === "/v1/session/create") {
      const id = `session-${++sessionSeq}`;
      sessions.set(id, { id, body: JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown> });
      bump();
      return json({ ID: id });
    }
    const renew = /^\/v1\/session\/renew\/(.+)$/.exec(path);
    if (method === "PUT" && renew) {
      const s = sessions.get(decodeURIComponent(renew[1]!));
      return s ? json([{ ID: s.id, ...s.body }]) : text(`Session id '${renew[1]}' not found`, 404);
    }
    const destroy = /^\/v1\/session\/destroy\/(.+)$/.exec(path);
    if (method === "PUT" && destroy) {
      destroySession(decodeURIComponent(destroy[1]!));
      return text("true");
    }
    if (path.startsWith("/v1/kv/")) return kvRoute(method, path.slice("/v1/kv/".length).split("/").map(decodeURIComponent).join("/"), query, body);
    return text("not found", 404);
  }

  const lines: string[] = [];
  const bodies: string[] = [];
  const agent: FakeAgent = {
    lines,
    bodies,
    kv,
    sessions,
    lockDelay: new Set(),
    down: false,
    index: () => idx,
    waiting: () => watchers.size,
    fail: (match, status, body, times = 1) => void failures.push({ match, status, body, times }),
    before: (match, fn) => void hooks.push({ match, fn }),
    put: (key, value, o = {}) => write(key, new TextEncoder().encode(value), o.flags ?? 0n, o.session ?? ""),
    deleteKey: remove,
    createSession(name = "other", behavior = "release") {
      const id = `other-${++sessionSeq}`;
      sessions.set(id, { id, body: { Name: name, Behavior: behavior } });
      bump();
      return id;
    },
    destroySession,
    async fetch(url, init) {
      const u = new URL(url);
      const body = init.body ?? new Uint8Array(0);
      lines.push(`${init.method} ${u.pathname}${u.search}`);
      bodies.push(new TextDecoder().decode(body));
      if (agent.down) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      const hook = hooks.findIndex((x) => x.match.test(lines[lines.length - 1]!));
      if (hook >= 0) hooks.splice(hook, 1)[0]!.fn();
      const failure = failures.find((f) => f.times > 0 && f.match.test(lines[lines.length - 1]!));
      if (failure) {
        failure.times--;
        return text(failure.body, failure.status);
      }
      return route(init.method, u.pathname, u.searchParams, body);
    },
  };
  return agent;
}

/** A fake child process: records its signals; ends when told to, or on a signal in `exitOn`. */
export interface FakeChild {
  readonly spec: ChildSpec;
  readonly pid: number;
  readonly signals: ChildSignal[];
  exitOn: ChildSignal[];
  readonly ended: boolean;
  exit(code: number | null, signal?: string | null): void;
}

export interface FakeChildren {
  readonly spawn: SpawnChild;
  readonly started: FakeChild[];
  /** When set, the next spawn fails with this message. */
  failWith: string | undefined;
  last(): FakeChild;
}

export function fakeChildren(): FakeChildren {
  const started: FakeChild[] = [];
  const children: FakeChildren = {
    started,
    failWith: undefined,
    last: () => started[started.length - 1]!,
    async spawn(spec) {
      if (children.failWith !== undefined) {
        const message = children.failWith;
        children.failWith = undefined;
        throw new Error(message);
      }
      let resolveExit!: (e: ChildExit) => void;
      const exited = new Promise<ChildExit>((r) => (resolveExit = r));
      const child: FakeChild = {
        spec,
        pid: 4200 + started.length,
        signals: [],
        exitOn: ["SIGINT", "SIGTERM", "SIGKILL"],
        ended: false,
        exit(code, signal = null) {
          if (child.ended) return;
          (child as { ended: boolean }).ended = true;
          resolveExit({ code, signal });
        },
      };
      started.push(child);
      const running: RunningChild = {
        pid: child.pid,
        exited,
        signal(sig) {
          child.signals.push(sig);
          if (child.exitOn.includes(sig)) child.exit(null, sig);
        },
      };
      return running;
    },
  };
  return children;
}

/** A run of `causeway lock` over the fakes, stepped by the test. */
export interface LockHarness {
  readonly clock: SimClock;
  readonly agent: FakeAgent;
  readonly children: FakeChildren;
  /** Delivers SIGINT or SIGTERM to the command. */
  signal(sig: "SIGINT" | "SIGTERM"): void;
  /** Whether the command listens for signals now. */
  listening(): boolean;
  /** Starts the command; `result` settles with its exit code and output. */
  start(argv: string[]): { readonly result: Promise<{ code: number; out: string; err: string }>; out(): string; err(): string; done(): boolean };
  /** Lets pending work run (no simulated time passes) until `cond` holds; throws naming `what` if it never does. */
  until(cond: () => boolean, what: string): Promise<void>;
  /** Runs the clock's timers for `ms` of simulated time, letting work settle after each. */
  advance(ms: number): Promise<void>;
}

export function lockHarness(env: Record<string, string> = {}): LockHarness {
  const clock = simClock();
  const agent = fakeAgent(clock);
  const children = fakeChildren();
  let handler: ((sig: "SIGINT" | "SIGTERM") => void) | undefined;
  const command = createLockCommand({
    env: () => ({ CONSUL_HTTP_ADDR: "http://agent.test", ...env }),
    fetch: agent.fetch,
    clock,
    spawnChild: children.spawn,
    onSignal: (h) => {
      handler = h;
      return () => (handler = undefined);
    },
  });
  const settle = async (turns = 5) => {
    for (let i = 0; i < turns; i++) await flushMacrotask();
  };
  return {
    clock,
    agent,
    children,
    signal: (sig) => handler?.(sig),
    listening: () => handler !== undefined,
    start(argv) {
      let out = "", err = "";
      let finished = false;
      const result = command.run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) }).then((code) => {
        finished = true;
        return { code, out, err };
      });
      return { result, out: () => out, err: () => err, done: () => finished };
    },
    async until(cond, what) {
      for (let i = 0; i < 400; i++) {
        if (cond()) return;
        await flushMacrotask();
      }
      throw new Error(`never happened: ${what}\nrequests:\n${agent.lines.join("\n")}`);
    },
    async advance(ms) {
      await runSimTimers(clock, ms, undefined, settle);
    },
  };
}
