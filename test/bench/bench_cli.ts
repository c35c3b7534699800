/**
 * What the process-starting benchmarks share at their top: flags (`--name` and `--name value`),
 * `--help` printing the script's opening doc comment, and the cleanup hooks that make sure no process
 * or temp dir outlives a run (on exit, Ctrl-C, SIGTERM and a `--max-minutes` watchdog).
 */
import { readFileSync } from "node:fs";

/** Flag readers over this process's arguments; `--help`/`-h` prints the doc comment of `scriptUrl` and exits. */
export function benchFlags(scriptUrl: string | URL) {
  const argv = process.argv.slice(2);
  const flag = (name: string) => argv.includes(name);
  const option = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (flag("--help") || flag("-h")) {
    console.log(readFileSync(scriptUrl, "utf8").split("*/")[0]!.replace(/^\/\*\*\n|^ \* ?/gm, ""));
    process.exit(0);
  }
  return { flag, option };
}

/**
 * Runs `killAll` on exit, on SIGINT/SIGTERM (then exits 130/143) and after `maxMinutes` (then exits
 * 2). Returns the function that disarms the watchdog once the run is done.
 */
export function installCleanup(killAll: () => void, maxMinutes: number): () => void {
  process.on("exit", killAll);
  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    process.on(sig, () => {
      console.error(`\n${sig}: stopping every process the benchmark started`);
      killAll();
      process.exit(code);
    });
  }
  const watchdog = setTimeout(() => {
    console.error(`\nbenchmark exceeded --max-minutes ${maxMinutes}: killing everything`);
    killAll();
    process.exit(2);
  }, maxMinutes * 60_000);
  return () => clearTimeout(watchdog);
}
