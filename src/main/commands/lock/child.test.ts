import { describe, expect, test } from "bun:test";
import { childArgv, childEnv, spawnLockChild } from "./child.ts";

const env = { PATH: process.env.PATH };

describe("the child's command line and environment", () => {
  test("-shell runs `$SHELL -c` (else /bin/sh) with the arguments joined by spaces; -shell=false runs them as they are", () => {
    expect(childArgv({ args: ["echo", "a b", "$HOME"], shell: true, env: {} })).toEqual(["/bin/sh", "-c", "echo a b $HOME"]);
    expect(childArgv({ args: ["echo", "hi"], shell: true, env: { SHELL: "/bin/bash" } })).toEqual(["/bin/bash", "-c", "echo hi"]);
    expect(childArgv({ args: ["echo", "a b"], shell: false, env: { SHELL: "/bin/bash" } })).toEqual(["echo", "a b"]);
  });

  test("the environment gains CONSUL_LOCK_HELD=true and CAUSEWAY_LOCK_HELD=true", () => {
    expect(childEnv({ A: "1", B: undefined, CONSUL_LOCK_HELD: "false" })).toEqual({ A: "1", CONSUL_LOCK_HELD: "true", CAUSEWAY_LOCK_HELD: "true" });
  });
});

describe("spawnLockChild (real processes)", () => {
  test("runs through the shell with the markers set; the exit code comes back", async () => {
    const child = await spawnLockChild({ args: ['test "$CONSUL_LOCK_HELD" = true && test "$CAUSEWAY_LOCK_HELD" = true && exit 7'], shell: true, passStdin: false, env });
    expect(child.pid).toBeGreaterThan(0);
    expect(await child.exited).toEqual({ code: 7, signal: null });
  });

  test("stdin is /dev/null unless passed", async () => {
    const child = await spawnLockChild({ args: ["if read x; then exit 5; else exit 6; fi"], shell: true, passStdin: false, env });
    expect((await child.exited).code).toBe(6);
  });

  test("a signal reaches the child's pid; signalling it after its exit is a no-op", async () => {
    const child = await spawnLockChild({ args: ["sleep", "30"], shell: false, passStdin: false, env });
    child.signal("SIGTERM");
    expect(await child.exited).toEqual({ code: null, signal: "SIGTERM" });
    child.signal("SIGKILL");
  });

  test("a missing executable is refused with Go's wording", async () => {
    await expect(spawnLockChild({ args: ["no-such-command-for-lock"], shell: false, passStdin: false, env })).rejects.toThrow('exec: "no-such-command-for-lock": executable file not found in $PATH');
  });
});
