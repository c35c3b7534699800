/**
 * What commands that run a child process (watch's handler, lock's child) share with Consul's Go: the
 * command line exec.Script / exec.Subprocess builds, and how os/exec words a child's end.
 */
import type { Env } from "./http_client.ts";

/** `[$SHELL or /bin/sh, "-c", args joined by " "]` with `shell`, else `args` as they are. */
export function shellArgv(args: readonly string[], shell: boolean, env: Env): string[] {
  return shell ? [env.SHELL || "/bin/sh", "-c", args.join(" ")] : [...args];
}

/** syscall.Signal.String() on Linux, as Go's ProcessState prints a signal. */
const GO_SIGNAL_TEXT: Readonly<Record<string, string>> = {
  SIGHUP: "hangup", SIGINT: "interrupt", SIGQUIT: "quit", SIGILL: "illegal instruction", SIGTRAP: "trace/breakpoint trap",
  SIGABRT: "aborted", SIGBUS: "bus error", SIGFPE: "floating point exception", SIGKILL: "killed", SIGUSR1: "user defined signal 1",
  SIGSEGV: "segmentation fault", SIGUSR2: "user defined signal 2", SIGPIPE: "broken pipe", SIGALRM: "alarm clock", SIGTERM: "terminated",
};

/** A signal as Go's os.Signal prints it ("interrupt", "terminated"); an unknown name as it is. */
export function goSignalText(signal: string): string {
  return Object.hasOwn(GO_SIGNAL_TEXT, signal) ? GO_SIGNAL_TEXT[signal]! : signal;
}

/** Go's `*exec.ExitError` text for a child that did not exit 0: `exit status 2`, `signal: killed`. */
export function goExitText(code: number | null, signal: string | null): string {
  return signal ? `signal: ${goSignalText(signal)}` : `exit status ${code ?? 0}`;
}
