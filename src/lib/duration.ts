/**
 * Go-style durations as Consul's config files and APIs write them: "300ms", "30s", "1m30s", "72h",
 * "1.5h", with units ns, us (µs), ms, s, m, h. Returned in milliseconds (fractions allowed).
 */

const UNITS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a duration into milliseconds; throws RangeError naming the text when it is not one or is out of Go's range. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let sign = 1;
  let i = 0;
  if (s[0] === "-" || s[0] === "+") {
    sign = s[0] === "-" ? -1 : 1;
    i = 1;
  }
  if (i >= s.length) throw new RangeError(`invalid duration ${JSON.stringify(text)}`);
  let total = 0;
  re.lastIndex = i;
  while (re.lastIndex < s.length) {
    const m = re.exec(s);
    if (!m) throw new RangeError(`invalid duration ${JSON.stringify(text)} (use a number with a unit: ms, s, m or h, e.g. "30s")`);
    total += Number(m[1]) * UNITS[m[2]!]!;
  }
  // Go's time.Duration is int64 nanoseconds: ParseDuration refuses anything beyond it.
  if (total > MAX_DURATION_MS) throw new RangeError(`invalid duration ${JSON.stringify(text)} (out of range: at most about 292 years)`);
  return sign * total;
}

/** The largest Go duration (2^63 - 1 ns), in milliseconds. */
export const MAX_DURATION_MS = 9_223_372_036_854.775;

/** Formats milliseconds the way Go prints durations ("1m30s", "500ms", "0s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  const neg = ms < 0;
  let rest = Math.abs(ms);
  if (rest < 1000) return `${neg ? "-" : ""}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const sec = rest / 1000;
  return `${neg ? "-" : ""}${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${Number(sec.toFixed(3))}s`;
}

/** A non-negative duration in milliseconds, or undefined when `text` is not one (config values). */
export function nonNegativeDurationMs(text: string): number | undefined {
  try {
    const ms = parseDuration(text);
    return ms >= 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}
