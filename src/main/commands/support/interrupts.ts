/**
 * The interrupts a long-running command (monitor, watch, lock) reacts to: SIGINT (Ctrl-C) and SIGTERM.
 * One subscription shape for all of them, so that each command removes its listeners when it is done.
 */
import process from "node:process";

export type InterruptSignal = "SIGINT" | "SIGTERM";

/** Calls `listener` on every SIGINT or SIGTERM of this process until the returned function is called. */
export function onProcessInterrupts(listener: (sig: InterruptSignal) => void): () => void {
  const onInt = () => listener("SIGINT");
  const onTerm = () => listener("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return () => {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  };
}

/** Resolves at the first SIGINT or SIGTERM, and stops listening then. */
export function nextProcessInterrupt(): Promise<InterruptSignal> {
  return new Promise((resolve) => {
    const stop = onProcessInterrupts((sig) => {
      stop();
      resolve(sig);
    });
  });
}
