/**
 * Running Envoy with a bootstrap, as Consul 1.8's exec_unix.go does: the JSON goes into an unlinked
 * temporary file (mode 0600) passed to Envoy as file descriptor 3 and named `--config-path /dev/fd/3`,
 * so the ACL token never appears in the process list; `--disable-hot-restart` unless the arguments
 * after `--` set a hot-restart option. Node cannot replace the process (exec(2)), so Envoy runs as a
 * child with the terminal's stdin/stdout/stderr, receives SIGINT/SIGTERM/SIGHUP forwarded, and its exit
 * status becomes the command's.
 */
import { spawn } from "node:child_process";
import { accessSync, closeSync, constants, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { constants as osConstants, tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import process from "node:process";

/**
 * Go's exec.LookPath: `name` itself when it contains a slash, else the first executable regular file
 * named `name` in `pathEnv` (an empty entry is the current directory). Throws Go's
 * `exec: "<name>": executable file not found in $PATH`.
 */
export function lookPath(name: string, pathEnv: string | undefined): string {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (name.includes("/")) {
    if (executable(name)) return name;
    throw new Error(`exec: ${JSON.stringify(name)}: executable file not found`);
  }
  for (const dir of (pathEnv ?? "").split(delimiter)) {
    const file = join(dir === "" ? "." : dir, name);
    if (executable(file)) return file;
  }
  throw new Error(`exec: ${JSON.stringify(name)}: executable file not found in $PATH`);
}

const HOT_RESTART_OPTIONS = ["--restart-epoch", "--hot-restart-version", "--drain-time-s", "--parent-shutdown-time-s"];

/** Consul's isHotRestartOption: the option itself or `<option>=<value>`. */
function isHotRestartOption(arg: string): boolean {
  return HOT_RESTART_OPTIONS.some((opt) => arg === opt || arg.startsWith(`${opt}=`));
}

/** The fd number Envoy reads its bootstrap from (the first after stdin, stdout, stderr). */
export const BOOTSTRAP_FD = 3;

/** Envoy's argument list: the config path, `--disable-hot-restart` when appropriate, then `passthrough`. */
export function envoyArgs(passthrough: readonly string[]): string[] {
  const args = ["--config-path", `/dev/fd/${BOOTSTRAP_FD}`];
  if (!passthrough.some(isHotRestartOption)) args.push("--disable-hot-restart");
  return [...args, ...passthrough];
}

/** Writes `content` to a file that is unlinked at once; returns its open descriptor (read from offset 0). */
function ephemeralFile(content: string): number {
  const dir = mkdtempSync(join(tmpdir(), "causeway-envoy-"));
  const path = join(dir, "bootstrap.json");
  let fd: number;
  try {
    fd = openSync(path, "w+", 0o600);
  } finally {
    // The descriptor keeps the data; nothing stays on disk, even if the write below fails.
    rmSync(dir, { recursive: true, force: true });
  }
  try {
    writeSync(fd, content, 0, "utf8");
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Runs `binary` with the bootstrap and `passthrough`, waiting for it to exit. Resolves to its exit code
 * (128 + signal number when a signal ended it); rejects with `Failed to exec envoy: ...` when it cannot
 * start.
 */
export function execEnvoy(binary: string, bootstrapJson: string, passthrough: readonly string[]): Promise<number> {
  const fd = ephemeralFile(bootstrapJson);
  return new Promise<number>((resolve, reject) => {
    const child = spawn(binary, envoyArgs(passthrough), { stdio: ["inherit", "inherit", "inherit", fd] });
    closeSync(fd);
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    const forward = (sig: NodeJS.Signals) => void child.kill(sig);
    for (const sig of signals) process.on(sig, forward);
    const cleanup = () => {
      for (const sig of signals) process.off(sig, forward);
    };
    child.once("error", (err: NodeJS.ErrnoException) => {
      cleanup();
      const reason = err.code === "ENOENT" ? "no such file or directory" : err.code === "EACCES" ? "permission denied" : err.message;
      reject(new Error(`Failed to exec envoy: fork/exec ${binary}: ${reason}`));
    });
    child.once("exit", (code, signal) => {
      cleanup();
      resolve(code ?? 128 + (signal ? osConstants.signals[signal] : 0));
    });
  });
}
