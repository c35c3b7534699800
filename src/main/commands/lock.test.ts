/**
 * `causeway lock` against an in-memory agent (lock/fixtures.test.ts): the exact requests of Consul's
 * api.Lock and api.Semaphore, the child's lifecycle, signals and Consul's messages and exit codes.
 * Time is simulated; nothing sleeps. lock/e2e.test.ts runs it against a real agent.
 */
import { describe, expect, test } from "bun:test";
import { parseFlags } from "../flags.ts";
import { lockOptionsOf } from "./lock.ts";
import { lockHarness, valueOf, type LockHarness } from "./lock/fixtures.test.ts";

const LOCK_FLAGS = 3304740253564472344n;
const SEM_FLAGS = 16210313421097356768n;
const KEY = "svc/leader/.lock";

/** Starts a run and waits until its child runs and the monitor's blocking read waits. */
async function holding(h: LockHarness, argv: string[]) {
  const run = h.start(argv);
  await h.until(() => h.children.started.length === 1 && h.agent.waiting() === 1, "the child runs while the monitor blocks");
  return run;
}

/** Another client holding `key` with a session of its own. */
function heldByOther(h: LockHarness, key = KEY, flags = LOCK_FLAGS): string {
  const other = h.agent.createSession();
  h.agent.put(key, "", { flags, session: other });
  return other;
}

describe("causeway lock (-n 1): the protocol of api.Lock", () => {
  test("acquires <prefix>/.lock with a 15s session, runs the child through the shell, then releases and cleans up", async () => {
    const h = lockHarness({ PATH: "/usr/bin" });
    const run = await holding(h, ["-verbose", "svc/leader", "echo", "hi"]);
    const session = "session-1";
    expect(h.agent.sessions.get(session)!.body).toEqual({ Name: "Consul lock for 'echo hi' at 'svc/leader'", TTL: "15s" });
    expect(h.agent.kv.get(KEY)).toMatchObject({ session, flags: LOCK_FLAGS });
    const child = h.children.last();
    expect(child.spec).toEqual({ args: ["echo", "hi"], shell: true, passStdin: false, env: { CONSUL_HTTP_ADDR: "http://agent.test", PATH: "/usr/bin" } });
    child.exit(0);
    expect(await run.result).toEqual({
      code: 0,
      out: ["Setting up lock at path: svc/leader/.lock", "Attempting lock acquisition", "Starting handler", "Child terminated, releasing lock", "Cleanup succeeded", ""].join("\n"),
      err: "",
    });
    expect(h.agent.lines).toEqual([
      "GET /v1/agent/self",
      "PUT /v1/session/create",
      `GET /v1/kv/${KEY}?wait=15000ms`,
      `PUT /v1/kv/${KEY}?acquire=${session}&flags=${LOCK_FLAGS}`,
      `GET /v1/kv/${KEY}?consistent=`,
      `GET /v1/kv/${KEY}?consistent=&index=2`,
      `PUT /v1/kv/${KEY}?flags=${LOCK_FLAGS}&release=${session}`,
      `PUT /v1/session/destroy/${session}`,
      `GET /v1/kv/${KEY}`,
      `DELETE /v1/kv/${KEY}?cas=3`,
    ]);
    expect(h.agent.bodies[1]).toBe(`{"Name":"Consul lock for 'echo hi' at 'svc/leader'","TTL":"15s"}`);
    expect([h.agent.kv.size, h.agent.sessions.size, h.listening()]).toEqual([0, 0, false]);
  });

  test("waits with blocking reads while another session holds the lock, then takes it", async () => {
    const h = lockHarness();
    const other = heldByOther(h);
    const run = h.start(["svc/leader", "true"]);
    await h.until(() => h.agent.waiting() === 1, "a blocking read");
    expect(h.agent.lines.slice(2)).toEqual([`GET /v1/kv/${KEY}?wait=15000ms`, `GET /v1/kv/${KEY}?index=3&wait=15000ms`]);
    expect(h.children.started).toEqual([]);
    // A blocking read that times out with nothing changed just blocks again.
    await h.advance(15_000);
    expect(h.agent.lines.slice(4).filter((l) => l.includes("/kv/"))).toEqual([`GET /v1/kv/${KEY}?index=3&wait=15000ms`]);
    h.agent.destroySession(other);
    await h.until(() => h.children.started.length === 1, "the child starts once the other holder is gone");
    h.children.last().exit(0);
    expect((await run.result).code).toBe(0);
    expect(h.agent.lines.filter((l) => l.includes("/kv/")).slice(2, 4)).toEqual([`GET /v1/kv/${KEY}?index=3&wait=15000ms`, `PUT /v1/kv/${KEY}?acquire=session-2&flags=${LOCK_FLAGS}`]);
  });

  test("an acquire refused under a lock-delay (nobody holds the key) is retried after 5s", async () => {
    const h = lockHarness();
    h.agent.lockDelay.add(KEY);
    const run = h.start(["svc/leader", "true"]);
    await h.until(() => h.clock.pending() === 2, "the retry pause (besides the renewal timer)");
    expect(h.agent.lines.slice(2)).toEqual([`GET /v1/kv/${KEY}?wait=15000ms`, `PUT /v1/kv/${KEY}?acquire=session-1&flags=${LOCK_FLAGS}`, `GET /v1/kv/${KEY}?wait=15000ms`]);
    await h.advance(4_999);
    expect(h.agent.lines.length).toBe(5);
    h.agent.lockDelay.delete(KEY);
    await h.advance(1);
    await h.until(() => h.children.started.length === 1, "the child starts after the retry");
    h.children.last().exit(0);
    expect((await run.result).code).toBe(0);
  });

  test("an acquire refused because someone took the key meanwhile waits on the index instead", async () => {
    const h = lockHarness();
    let other = "";
    h.agent.before(/acquire=session-1/, () => (other = heldByOther(h)));
    const run = h.start(["svc/leader", "true"]);
    await h.until(() => h.agent.waiting() === 1, "a blocking read");
    expect(h.agent.lines.slice(4)).toEqual([`GET /v1/kv/${KEY}?wait=15000ms`, `GET /v1/kv/${KEY}?index=3&wait=15000ms`]);
    h.agent.destroySession(other);
    await h.until(() => h.children.started.length === 1, "the child");
    h.children.last().exit(0);
    expect((await run.result).code).toBe(0);
  });

  test("a key with other flags is a conflict: exit 1, the session destroyed", async () => {
    const h = lockHarness();
    h.agent.put(KEY, "mine");
    expect(await h.start(["svc/leader", "true"]).result).toEqual({ code: 1, out: "", err: "Lock acquisition failed: Existing key does not match lock use\n" });
    expect(h.agent.lines.at(-1)).toBe("PUT /v1/session/destroy/session-1");
    expect(valueOf(h.agent, KEY)).toBe("mine");
  });

  test("-timeout makes one attempt of that long; -try is its deprecated alias", async () => {
    for (const flag of ["-timeout=2s", "-try=2s"]) {
      const h = lockHarness();
      heldByOther(h);
      const run = h.start([flag, "svc/leader", "true"]);
      await h.until(() => h.agent.waiting() === 1, "a blocking read");
      expect(h.agent.lines.slice(2)).toEqual([`GET /v1/kv/${KEY}?wait=2000ms`, `GET /v1/kv/${KEY}?index=3&wait=2000ms`]);
      await h.advance(2_000);
      expect(await run.result).toEqual({ code: 1, out: "", err: "Shutdown triggered or timeout during lock acquisition\n" });
      expect(h.agent.lines.at(-1)).toBe("PUT /v1/session/destroy/session-2");
      expect(h.children.started).toEqual([]);
    }
  });

  test("the -timeout budget shrinks with each blocking read", async () => {
    const h = lockHarness();
    heldByOther(h);
    const run = h.start(["-timeout=10s", "svc/leader", "true"]);
    await h.until(() => h.agent.waiting() === 1, "a blocking read");
    await h.advance(4_000);
    h.agent.put("unrelated", "x");
    await h.until(() => h.agent.lines.length === 5, "the next read");
    expect(h.agent.lines.at(-1)).toBe(`GET /v1/kv/${KEY}?index=4&wait=6000ms`);
    await h.advance(6_000);
    expect((await run.result).code).toBe(1);
  });

  test("SIGINT while waiting stops at once: exit 1, the session destroyed, no child", async () => {
    const h = lockHarness();
    heldByOther(h);
    const run = h.start(["svc/leader", "true"]);
    await h.until(() => h.agent.waiting() === 1, "a blocking read");
    h.signal("SIGINT");
    expect(await run.result).toEqual({ code: 1, out: "", err: "Shutdown triggered or timeout during lock acquisition\n" });
    expect(h.agent.lines.at(-1)).toBe("PUT /v1/session/destroy/session-2");
    expect(h.children.started).toEqual([]);
  });

  test("a shutdown that arrives while the acquire is in flight releases the lock without starting the child (exit 0)", async () => {
    const h = lockHarness();
    h.agent.before(/acquire=/, () => h.signal("SIGTERM"));
    expect(await h.start(["svc/leader", "true"]).result).toEqual({ code: 0, out: "", err: "Shutdown triggered during lock acquisition\n" });
    expect(h.children.started).toEqual([]);
    expect(h.agent.lines.slice(-4)).toEqual([`PUT /v1/kv/${KEY}?flags=${LOCK_FLAGS}&release=session-1`, "PUT /v1/session/destroy/session-1", `GET /v1/kv/${KEY}`, `DELETE /v1/kv/${KEY}?cas=3`]);
  });

  test("the session is renewed every TTL/2; a session gone stops the renewals", async () => {
    const h = lockHarness();
    const run = await holding(h, ["svc/leader", "sleep", "60"]);
    const renewals = () => h.agent.lines.filter((l) => l.startsWith("PUT /v1/session/renew/")).length;
    await h.advance(7_499);
    expect(renewals()).toBe(0);
    await h.advance(1);
    expect(h.agent.lines.at(-1)).toBe("PUT /v1/session/renew/session-1");
    await h.advance(7_500);
    expect(renewals()).toBe(2);
    h.agent.fail(/renew/, 500, "no leader");
    await h.advance(7_500);
    await h.advance(1_000);
    expect(renewals()).toBe(4);
    h.children.last().exit(0);
    expect((await run.result).code).toBe(0);
    await h.advance(60_000);
    expect(renewals()).toBe(4);
  });
});

describe("causeway lock (-n 1): the child and the lock's loss", () => {
  test("the lock lost (another session took the key): SIGTERM to the child, release, cleanup skipped, exit 0", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-verbose", "-child-exit-code", "svc/leader", "sleep", "60"]);
    h.agent.put(KEY, "", { flags: LOCK_FLAGS, session: h.agent.createSession() });
    const r = await run.result;
    expect(h.children.last().signals).toEqual(["SIGTERM"]);
    expect(r).toEqual({
      code: 0,
      out: [
        "Setting up lock at path: svc/leader/.lock", "Attempting lock acquisition", "Starting handler", "Lock lost, killing child", "Terminating child pid 4200",
        "Child terminated", "Cleanup aborted, lock in use", "",
      ].join("\n"),
      err: "Error running handler: signal: terminated\n",
    });
  });

  test("a child that ignores SIGTERM gets SIGKILL after the 5s grace period", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-verbose", "svc/leader", "sleep", "60"]);
    const child = h.children.last();
    child.exitOn = ["SIGKILL"];
    h.agent.deleteKey(KEY);
    await h.until(() => child.signals.length === 1, "SIGTERM");
    await h.advance(4_999);
    expect(child.signals).toEqual(["SIGTERM"]);
    await h.advance(1);
    const r = await run.result;
    expect(child.signals).toEqual(["SIGTERM", "SIGKILL"]);
    expect(r.out).toContain("Terminating child pid 4200\nChild did not exit after grace period of 5s\nKilling child pid 4200\nCleanup succeeded\n");
    expect(r.code).toBe(0);
  });

  test("SIGINT while the child runs is forwarded to it, then the child is terminated and the lock released (exit 0)", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-verbose", "svc/leader", "sleep", "60"]);
    const child = h.children.last();
    child.exitOn = ["SIGTERM"];
    h.signal("SIGINT");
    const r = await run.result;
    expect(child.signals).toEqual(["SIGINT", "SIGTERM"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("Shutdown triggered, killing child\nTerminating child pid 4200\nChild terminated\nCleanup succeeded\n");
    expect(h.agent.lines.slice(-4)).toEqual([`PUT /v1/kv/${KEY}?flags=${LOCK_FLAGS}&release=session-1`, "PUT /v1/session/destroy/session-1", `GET /v1/kv/${KEY}`, `DELETE /v1/kv/${KEY}?cas=3`]);
  });

  test("a failing child is reported; it changes the exit code (to 2) only with -child-exit-code", async () => {
    for (const [argv, code] of [[[], 0], [["-child-exit-code"], 2]] as const) {
      const h = lockHarness();
      const run = await holding(h, [...argv, "svc/leader", "exit 3"]);
      h.children.last().exit(3);
      expect(await run.result).toEqual({ code, out: "", err: "Error running handler: exit status 3\n" });
    }
  });

  test("a child that cannot start is reported and the lock released; exit 2 with -child-exit-code", async () => {
    const h = lockHarness();
    h.children.failWith = 'exec: "nope": executable file not found in $PATH';
    const r = await h.start(["-child-exit-code", "-shell=false", "svc/leader", "nope"]).result;
    expect(r).toEqual({ code: 2, out: "", err: 'Error starting handler: exec: "nope": executable file not found in $PATH\n' });
    // (The monitor starts with the lock; when its reads happen next to the child's failure is a matter of timing.)
    expect(h.agent.lines.filter((l) => !l.includes("consistent=")).slice(-4, -2)).toEqual([`PUT /v1/kv/${KEY}?flags=${LOCK_FLAGS}&release=session-1`, "PUT /v1/session/destroy/session-1"]);
  });

  test("-monitor-retry rides out 500s while monitoring, 1s apart; past the retries the lock counts as lost", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-monitor-retry=1", "svc/leader", "sleep", "60"]);
    const child = h.children.last();
    h.agent.fail(/consistent=/, 500, "no leader");
    h.agent.put("unrelated", "x");
    await h.until(() => h.clock.pending() === 2, "the retry pause");
    await h.advance(1_000);
    await h.until(() => h.agent.waiting() === 1, "blocking again");
    expect(h.agent.lines.slice(-4)).toEqual([`GET /v1/kv/${KEY}?consistent=&index=2`, `GET /v1/kv/${KEY}?consistent=&index=3`, `GET /v1/kv/${KEY}?consistent=`, `GET /v1/kv/${KEY}?consistent=&index=3`]);
    expect(child.signals).toEqual([]);
    // A success in between restores the retries; two failures in a row are one too many.
    h.agent.fail(/consistent=/, 500, "no leader", 2);
    h.agent.put("unrelated", "y");
    await h.until(() => h.clock.pending() === 2, "the retry pause");
    await h.advance(1_000);
    expect((await run.result).code).toBe(0);
    expect(child.signals).toEqual(["SIGTERM"]);
  });

  test("with -monitor-retry=0 the first 500 loses the lock; other errors are never retried", async () => {
    for (const [argv, status] of [[["-monitor-retry=0"], 500], [[], 403]] as const) {
      const h = lockHarness();
      const run = await holding(h, [...argv, "svc/leader", "sleep", "60"]);
      h.agent.fail(/consistent=/, status, "nope");
      h.agent.put("unrelated", "x");
      expect((await run.result).code).toBe(0);
      expect(h.children.last().signals).toEqual(["SIGTERM"]);
    }
  });
});

describe("causeway lock: errors worded as Consul's", () => {
  test("argument and flag checks, in Consul's order, before any request", async () => {
    const cases: Array<[string[], string]> = [
      [[], "Key prefix and child command must be specified\n"],
      [["svc"], "Key prefix and child command must be specified\n"],
      [["-n=0", "svc", "true"], "Lock holder limit must be positive\n"],
      [["-n=-2"], "Lock holder limit must be positive\n"],
      [["-timeout=-1s", "svc", "true"], "Timeout must be positive\n"],
      [["-monitor-retry=-1", "svc", "true"], "Number for 'monitor-retry' must be >= 0\n"],
    ];
    for (const [argv, err] of cases) {
      const h = lockHarness();
      expect(await h.start(argv).result).toEqual({ code: 1, out: "", err });
      expect(h.agent.lines).toEqual([]);
    }
    for (const [argv, err] of [[["-timeout=soon", "svc", "true"], 'invalid value "soon" for flag -timeout: time: invalid duration soon\n'], [["-nope"], "flag provided but not defined: -nope\n"]] as const) {
      const r = await lockHarness().start([...argv]).result;
      expect(r.code).toBe(1);
      expect(r.err).toStartWith(`${err}Usage: causeway lock [options] prefix child...`);
    }
  });

  test("-h prints the help with the HTTP API options and the command's", async () => {
    const r = await lockHarness().start(["-h"]).result;
    expect(r.code).toBe(0);
    for (const flag of ["-http-addr=<address>", "-token=<value>", "-datacenter=<name>", "-child-exit-code", "-monitor-retry=<int>", "-n=<int>", "-name=<string>", "-pass-stdin", "-shell", "-timeout=<duration>", "-try=<duration>", "-verbose"]) {
      expect(r.out).toContain(`\n  ${flag}\n`);
    }
  });

  test("an agent that cannot be reached, or refuses", async () => {
    const h = lockHarness();
    h.agent.down = true;
    expect(await h.start(["svc", "true"]).result).toEqual({ code: 1, out: "", err: 'Error querying Consul agent: Get "http://agent.test/v1/agent/self": connection refused\n' });
    const bad = await lockHarness().start(["-http-addr=ftp://x", "svc", "true"]).result;
    expect(bad).toEqual({ code: 1, out: "", err: 'Error connecting to Consul agent: unsupported scheme in HTTP address "ftp://x" (want http or https)\n' });
    const h2 = lockHarness();
    h2.agent.fail(/session\/create/, 500, "No cluster leader");
    expect((await h2.start(["svc", "true"]).result).err).toBe("Lock acquisition failed: failed to create session: Unexpected response code: 500 (No cluster leader)\n");
  });

  test("a failed read while acquiring fails the acquisition and destroys the session", async () => {
    const h = lockHarness();
    h.agent.fail(/GET \/v1\/kv/, 500, "boom");
    expect((await h.start(["svc/leader", "true"]).result).err).toBe("Lock acquisition failed: failed to read lock: Unexpected response code: 500 (boom)\n");
    expect(h.agent.lines.at(-1)).toBe("PUT /v1/session/destroy/session-1");
  });

  test("a failed release is exit 1 (the session destroyed all the same); a failed cleanup too", async () => {
    const h = lockHarness();
    h.agent.fail(/release=/, 500, "boom");
    const run = await holding(h, ["svc/leader", "true"]);
    h.children.last().exit(0);
    expect(await run.result).toEqual({ code: 1, out: "", err: "Lock release failed: failed to release lock: Unexpected response code: 500 (boom)\n" });
    expect(h.agent.lines.at(-1)).toBe("PUT /v1/session/destroy/session-1");
    const h2 = lockHarness();
    h2.agent.fail(/DELETE/, 500, "boom");
    const run2 = await holding(h2, ["svc/leader", "true"]);
    h2.children.last().exit(0);
    expect(await run2.result).toEqual({ code: 1, out: "", err: "Lock cleanup failed: failed to remove lock: Unexpected response code: 500 (boom)\n" });
  });

  test("a lock key taken by someone else between release and cleanup is left alone", async () => {
    const h = lockHarness();
    h.agent.before(/session\/destroy/, () => heldByOther(h));
    const run = await holding(h, ["-verbose", "svc/leader", "true"]);
    h.children.last().exit(0);
    const r = await run.result;
    expect(r.code).toBe(0);
    expect(r.out).toEndWith("Child terminated, releasing lock\nCleanup aborted, lock in use\n");
    expect(h.agent.lines.at(-1)).toBe(`GET /v1/kv/${KEY}`);
  });
});

describe("causeway lock: options", () => {
  test("-name, -shell=false, -pass-stdin, -datacenter, and a leading slash on the prefix", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-name=nightly", "-shell=false", "-pass-stdin", "-datacenter=dc2", "/svc/leader", "backup.sh", "--full"]);
    expect(h.agent.sessions.get("session-1")!.body.Name).toBe("nightly");
    expect(h.children.last().spec).toMatchObject({ args: ["backup.sh", "--full"], shell: false, passStdin: true });
    h.children.last().exit(0);
    await run.result;
    expect(h.agent.lines.every((l) => l.includes("dc=dc2"))).toBe(true);
    expect(h.agent.lines[3]).toBe(`PUT /v1/kv/${KEY}?acquire=session-1&dc=dc2&flags=${LOCK_FLAGS}`);
  });

  test("lockOptionsOf: defaults, the trimmed prefix in the session name, -timeout over -try", () => {
    const opts = (argv: string[]) => lockOptionsOf(parseFlags([
      { name: "n", kind: "int", usage: "" }, { name: "timeout", kind: "string", usage: "" }, { name: "try", kind: "string", usage: "" },
      { name: "shell", kind: "bool", usage: "" }, { name: "monitor-retry", kind: "int", usage: "" },
    ], argv));
    expect(opts(["/a/b", "run", "it"])).toEqual({
      limit: 1, monitorRetry: 3, sessionName: "Consul lock for 'run it' at 'a/b'", passStdin: false, propagateChildCode: false, shell: true, timeoutMs: 0, verbose: false,
      prefix: "a/b", childArgs: ["run", "it"],
    });
    expect(opts(["-try=1m", "-timeout=1.5s", "//x", "c"])).toMatchObject({ timeoutMs: 1500, prefix: "/x" });
    expect(opts(["-try=250ms", "-shell=false", "x", "c"])).toMatchObject({ timeoutMs: 250, shell: false });
  });
});

describe("causeway lock -n N (N > 1): the protocol of api.Semaphore", () => {
  const PREFIX = "jobs";
  const LOCK = "jobs/.lock";

  test("a contender key, then our session added to .lock's holders with CAS; released and removed after the child", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-n=2", "-verbose", PREFIX, "make"]);
    const session = "session-1";
    expect(h.agent.sessions.get(session)!.body).toEqual({ Behavior: "delete", Name: "Consul lock for 'make' at 'jobs'", TTL: "15s" });
    expect(valueOf(h.agent, LOCK)).toBe(`{"Limit":2,"Holders":{"${session}":true}}`);
    h.children.last().exit(0);
    const r = await run.result;
    expect(r).toEqual({
      code: 0,
      out: ["Setting up semaphore (limit 2) at prefix: jobs", "Attempting lock acquisition", "Starting handler", "Child terminated, releasing lock", "Cleanup succeeded", ""].join("\n"),
      err: "",
    });
    expect(h.agent.lines).toEqual([
      "GET /v1/agent/self",
      "PUT /v1/session/create",
      `PUT /v1/kv/jobs/${session}?acquire=${session}&flags=${SEM_FLAGS}`,
      "GET /v1/kv/jobs?recurse=&wait=15000ms",
      `PUT /v1/kv/${LOCK}?cas=0&flags=${SEM_FLAGS}`,
      "GET /v1/kv/jobs?consistent=&recurse=",
      "GET /v1/kv/jobs?consistent=&index=3&recurse=",
      `GET /v1/kv/${LOCK}`,
      `PUT /v1/kv/${LOCK}?cas=3&flags=${SEM_FLAGS}`,
      `DELETE /v1/kv/jobs/${session}`,
      `PUT /v1/session/destroy/${session}`,
      "GET /v1/kv/jobs?recurse=",
      `DELETE /v1/kv/${LOCK}?cas=4`,
    ]);
    expect(h.agent.bodies[1]).toBe(`{"Behavior":"delete","Name":"Consul lock for 'make' at 'jobs'","TTL":"15s"}`);
    expect(h.agent.bodies[4]).toBe(`{"Limit":2,"Holders":{"${session}":true}}`);
    expect(h.agent.bodies[8]).toBe(`{"Limit":2,"Holders":{}}`);
    expect([h.agent.kv.size, h.agent.sessions.size]).toEqual([0, 0]);
  });

  /** `count` other contenders holding slots of a limit-`limit` semaphore, as api.Semaphore leaves them. */
  function otherHolders(h: LockHarness, count: number, limit = 2): string[] {
    const ids = Array.from({ length: count }, () => h.agent.createSession("other", "delete"));
    for (const id of ids) h.agent.put(`jobs/${id}`, "", { flags: SEM_FLAGS, session: id });
    h.agent.put(LOCK, JSON.stringify({ Limit: limit, Holders: Object.fromEntries(ids.map((id) => [id, true])) }), { flags: SEM_FLAGS });
    return ids;
  }

  test("all slots taken: blocks on the listing; a holder whose session ended is pruned and its slot taken", async () => {
    const h = lockHarness();
    const [a, b] = otherHolders(h, 2);
    const run = h.start(["-n=2", PREFIX, "make"]);
    await h.until(() => h.agent.waiting() === 1, "a blocking listing");
    expect(h.agent.lines.at(-1)).toBe(`GET /v1/kv/jobs?index=${h.agent.index()}&recurse=&wait=15000ms`);
    h.agent.destroySession(a!);
    await h.until(() => h.children.started.length === 1, "the child");
    expect(JSON.parse(valueOf(h.agent, LOCK)!)).toEqual({ Limit: 2, Holders: { [b!]: true, "session-3": true } });
    h.children.last().exit(0);
    const r = await run.result;
    expect(r.code).toBe(0);
    expect(JSON.parse(valueOf(h.agent, LOCK)!)).toEqual({ Limit: 2, Holders: { [b!]: true } });
  });

  test("a holder still there makes the cleanup leave .lock alone", async () => {
    const h = lockHarness();
    otherHolders(h, 1);
    const run = await holding(h, ["-n=2", "-verbose", PREFIX, "make"]);
    h.children.last().exit(0);
    expect((await run.result).out).toEndWith("Cleanup aborted, lock in use\n");
    expect(h.agent.kv.has(LOCK)).toBe(true);
  });

  test("a lost CAS race reads the prefix again and retries at the new index", async () => {
    const h = lockHarness();
    h.agent.before(/PUT \/v1\/kv\/jobs\/\.lock\?cas=0/, () => otherHolders(h, 1));
    const run = await holding(h, ["-n=2", PREFIX, "make"]);
    expect(h.agent.lines.filter((l) => l.includes(".lock?cas="))).toEqual([`PUT /v1/kv/${LOCK}?cas=0&flags=${SEM_FLAGS}`, `PUT /v1/kv/${LOCK}?cas=5&flags=${SEM_FLAGS}`]);
    h.children.last().exit(0);
    expect((await run.result).code).toBe(0);
  });

  test("our holder entry removed from .lock: the slot is lost and the child terminated", async () => {
    const h = lockHarness();
    const run = await holding(h, ["-n=2", PREFIX, "make"]);
    h.agent.put(LOCK, `{"Limit":2,"Holders":{}}`, { flags: SEM_FLAGS });
    expect((await run.result).code).toBe(0);
    expect(h.children.last().signals).toEqual(["SIGTERM"]);
  });

  test("a limit other contenders disagree with, and a lock and a semaphore on one prefix, are conflicts", async () => {
    const limit = lockHarness();
    otherHolders(limit, 1, 3);
    expect((await limit.start(["-n=2", PREFIX, "make"]).result).err).toBe("Lock acquisition failed: semaphore limit conflict (lock: 3, local: 2)\n");
    expect(limit.agent.lines.at(-1)).toBe("PUT /v1/session/destroy/session-2");
    const lockThere = lockHarness();
    heldByOther(lockThere, LOCK);
    expect((await lockThere.start(["-n=2", PREFIX, "make"]).result).err).toBe("Lock acquisition failed: Existing key does not match semaphore use\n");
    const semaphoreThere = lockHarness();
    otherHolders(semaphoreThere, 1);
    expect((await semaphoreThere.start([PREFIX, "make"]).result).err).toBe("Lock acquisition failed: Existing key does not match lock use\n");
    const garbage = lockHarness();
    garbage.agent.put(LOCK, "{", { flags: SEM_FLAGS });
    expect((await garbage.start(["-n=2", PREFIX, "make"]).result).err).toBe("Lock acquisition failed: lock decoding failed: unexpected EOF\n");
  });

  test("a refused contender entry, and an empty prefix", async () => {
    const h = lockHarness();
    h.agent.fail(/acquire=/, 200, "false");
    expect((await h.start(["-n=3", PREFIX, "make"]).result).err).toBe("Lock acquisition failed: failed to make contender entry: <nil>\n");
    expect(await lockHarness().start(["-n=2", "/", "make"]).result).toEqual({ code: 1, out: "", err: "Lock setup failed: missing prefix\n" });
  });
});
