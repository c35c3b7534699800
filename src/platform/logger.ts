/**
 * Logger port: levelled, structured logs with a component name.
 *
 * A line is either `key=value` text (the default, for humans) or one JSON object per line.
 * Fields are plain data; values are rendered with JSON quoting when they contain spaces,
 * quotes or `=`, so a line stays machine-parseable.
 */

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  trace(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger for a sub-component: names nest as `agent.http`. Shares level and sink. */
  named(component: string): Logger;
}

export const LOG_LEVELS: readonly LogLevel[] = ["trace", "debug", "info", "warn", "error"];

/** A reader of log lines beside the sink (`/v1/agent/monitor`), with its own level and format. */
export interface LogTap {
  readonly level: LogLevel;
  readonly format: "text" | "json";
  /** One finished line, without the trailing newline. Must not log (it would recurse). */
  write(line: string): void;
}

/**
 * The taps of a logger tree (Consul's hclog intercept sinks): every line at or above a tap's level
 * reaches it, whatever the logger's own level, formatted as the tap asks.
 */
export class LogTaps {
  private readonly taps = new Set<LogTap>();
  /** The lowest level index any tap wants (LOG_LEVELS.length when there are none). */
  minIndex = LOG_LEVELS.length;

  /** Adds a tap; returns its removal. */
  add(tap: LogTap): () => void {
    this.taps.add(tap);
    this.recompute();
    return () => {
      this.taps.delete(tap);
      this.recompute();
    };
  }

  /** @internal Hands one entry to every tap that wants it, formatting it at most once per format. */
  deliver(levelIndex: number, ts: string, level: LogLevel, name: string, msg: string, fields?: LogFields): void {
    let text: string | undefined;
    let json: string | undefined;
    for (const t of this.taps) {
      if (LOG_LEVELS.indexOf(t.level) > levelIndex) continue;
      t.write(t.format === "json" ? (json ??= jsonLine(ts, level, name, msg, fields)) : (text ??= textLine(ts, level, name, msg, fields)));
    }
  }

  private recompute(): void {
    this.minIndex = Math.min(LOG_LEVELS.length, ...[...this.taps].map((t) => LOG_LEVELS.indexOf(t.level)));
  }
}

/** A level the logger reads at every line, so that a reload can change it in a running logger tree. */
export interface LogLevelSetting {
  level: LogLevel;
}

export interface LoggerOptions {
  /** The lowest level written to the sink: fixed, or a setting that may change (default "info"). */
  level?: LogLevel | LogLevelSetting;
  /** Readers of lines beside the sink, each at its own level (see LogTaps). */
  taps?: LogTaps;
  format?: "text" | "json";
  /** Where finished lines go (without the trailing newline). Default: stderr. */
  sink?: (line: string) => void;
  /** Wall-clock source for timestamps; default Date.now. */
  now?: () => number;
}

/** Parses a level name as Consul's `log_level` accepts it (case-insensitive). Returns undefined if unknown. */
export function parseLogLevel(name: string): LogLevel | undefined {
  const lower = name.toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(lower) ? (lower as LogLevel) : undefined;
}

export function createLogger(component: string, options: LoggerOptions = {}): Logger {
  const setting: LogLevelSetting = typeof options.level === "object" ? options.level : { level: options.level ?? "info" };
  const format = options.format ?? "text";
  const sink = options.sink ?? ((line: string) => console.error(line));
  const now = options.now ?? (() => Date.now());

  const taps = options.taps;
  const make = (name: string): Logger => {
    const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
      const index = LOG_LEVELS.indexOf(level);
      const min = LOG_LEVELS.indexOf(setting.level);
      const tapped = taps !== undefined && index >= taps.minIndex;
      if (index < min && !tapped) return;
      const ts = new Date(now()).toISOString();
      if (index >= min) sink(format === "json" ? jsonLine(ts, level, name, msg, fields) : textLine(ts, level, name, msg, fields));
      if (tapped) taps.deliver(index, ts, level, name, msg, fields);
    };
    return {
      trace: (m, f) => emit("trace", m, f),
      debug: (m, f) => emit("debug", m, f),
      info: (m, f) => emit("info", m, f),
      warn: (m, f) => emit("warn", m, f),
      error: (m, f) => emit("error", m, f),
      named: (sub) => make(name ? `${name}.${sub}` : sub),
    };
  };
  return make(component);
}

/** A logger that drops everything; for tests that do not look at logs. */
export function silentLogger(): Logger {
  const l: Logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, named: () => l };
  return l;
}

/** A logger that records lines in memory; `lines` is the live array. For tests that assert on logs. */
export function memoryLogger(level: LogLevel = "trace"): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger("", { level, sink: (l) => lines.push(l), now: () => 0 });
  return Object.assign(logger, { lines });
}

/** JSON.stringify that never throws: bigints as numbers' text, Errors as messages, cycles marked. */
function safeJson(v: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(v, (_k, x: unknown) => {
      if (typeof x === "bigint") return x.toString();
      if (x instanceof Error) return x.message;
      if (typeof x === "object" && x !== null) {
        if (seen.has(x)) return "[circular]";
        seen.add(x);
      }
      return x;
    }) ?? String(v);
  } catch {
    return String(v);
  }
}

function renderValue(v: unknown): string {
  if (v instanceof Error) v = v.message;
  const s = typeof v === "string" ? v : typeof v === "bigint" ? v.toString() : safeJson(v);
  // Quote anything that would break the line's key=value structure: spaces, quotes, '=', control characters.
  return /[\s"=\x00-\x1f\x7f]/.test(s) || s === "" ? JSON.stringify(s) : s;
}

function textLine(ts: string, level: LogLevel, name: string, msg: string, fields?: LogFields): string {
  // A message with line breaks or control characters is quoted so that one entry stays one line.
  const shownMsg = /[\x00-\x1f\x7f]/.test(msg) ? JSON.stringify(msg) : msg;
  let line = `${ts} [${level.toUpperCase()}] ${name ? name + ": " : ""}${shownMsg}`;
  if (fields) {
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) continue;
      const key = /^[\w.-]+$/.test(k) ? k : JSON.stringify(k);
      line += ` ${key}=${renderValue(v)}`;
    }
  }
  return line;
}

function jsonLine(ts: string, level: LogLevel, name: string, msg: string, fields?: LogFields): string {
  const obj: Record<string, unknown> = { "@timestamp": ts, "@level": level, "@module": name, "@message": msg };
  // A field cannot forge the entry's own keys: a colliding name is kept with a "_" in front.
  if (fields) for (const [k, v] of Object.entries(fields)) obj[k in obj && k.startsWith("@") ? `_${k}` : k] = v;
  return safeJson(obj);
}
