/**
 * Reading `bun test` output for the end of a CI log: the log is often seen only from its tail, where
 * Bun's summary names a failed test but not why. `failureDetails` takes, for every failed test, the
 * lines Bun printed for it (between the previous test's result line and its own "(fail)" line: the
 * error, the expected/received values, the stack), so `build.ts test` can repeat them at the end.
 */

const RESULT = /^\((pass|fail|skip|todo)\) /;
/** Bun's closing list ("3 tests failed:") repeats the (fail) lines without their errors. */
const SUMMARY_HEADER = /^\s*\d+ tests? (failed|skipped|todo):?$/;

export interface FailureDetail {
  /** The "(fail) …" line. */
  readonly test: string;
  /** What Bun printed for it before that line, at most `maxLines` of the last ones. */
  readonly lines: readonly string[];
  /** Lines left off the front to keep within `maxLines`. */
  readonly omitted: number;
}

export function failureDetails(output: string, maxLines = 80): FailureDetail[] {
  const lines = output.split("\n");
  const out: FailureDetail[] = [];
  let since = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (SUMMARY_HEADER.test(line)) {
      // Skip the closing list; anything after it (another file's run) starts afresh.
      while (i + 1 < lines.length && (RESULT.test(lines[i + 1]!) || lines[i + 1]!.trim() === "")) i++;
      since = i + 1;
      continue;
    }
    if (/^\S.*\.(test|spec)\.[jt]sx?:$/.test(line)) since = i + 1; // a file header
    if (!RESULT.test(line)) continue;
    if (line.startsWith("(fail) ")) {
      const body = lines.slice(since, i);
      while (body.length > 0 && body[0]!.trim() === "") body.shift();
      const omitted = Math.max(0, body.length - maxLines);
      out.push({ test: line, lines: body.slice(omitted), omitted });
    }
    since = i + 1;
  }
  return out;
}

/** The failures as one block for the end of a log, or "" when there were none. */
export function formatFailureDetails(details: readonly FailureDetail[]): string {
  if (details.length === 0) return "";
  const parts = [`==== ${details.length} failed test${details.length === 1 ? "" : "s"}, repeated with what was printed for each ====`];
  for (const d of details) {
    parts.push(d.test);
    if (d.omitted > 0) parts.push(`  … ${d.omitted} earlier lines left off`);
    parts.push(...d.lines.map((l) => `  ${l}`));
  }
  return parts.join("\n");
}
