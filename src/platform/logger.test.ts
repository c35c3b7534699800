import { describe, expect, test } from "bun:test";
import { createLogger, LOG_LEVELS, LogTaps, memoryLogger, parseLogLevel, silentLogger } from "./logger.ts";
import type { LoggerOptions, LogLevel } from "./logger.ts";

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
const TS = "2024-01-02T03:04:05.678Z";

/** A logger writing into an array, with a fixed clock. */
function capture(component = "", options: LoggerOptions = {}) {
  const lines: string[] = [];
  const logger = createLogger(component, { level: "trace", now: () => T0, sink: (l) => lines.push(l), ...options });
  return { logger, lines };
}

describe("text format", () => {
  test("timestamp, upper-case level, component and message", () => {
    const { logger, lines } = capture("agent");
    logger.info("started");
    expect(lines).toEqual([`${TS} [INFO] agent: started`]);
  });

  test("an empty component name leaves out the prefix", () => {
    const { logger, lines } = capture();
    logger.warn("hello");
    expect(lines).toEqual([`${TS} [WARN] hello`]);
  });

  test("named() nests component names with dots and shares the sink", () => {
    const { logger, lines } = capture("agent");
    logger.named("http").named("api").error("x");
    logger.named("dns").debug("y");
    expect(lines).toEqual([`${TS} [ERROR] agent.http.api: x`, `${TS} [DEBUG] agent.dns: y`]);
  });

  test("named() from an unnamed root does not start with a dot", () => {
    const { logger, lines } = capture();
    logger.named("raft").named("log").trace("z");
    expect(lines).toEqual([`${TS} [TRACE] raft.log: z`]);
  });

  test("named() shares the level of its parent", () => {
    const { logger, lines } = capture("a", { level: "warn" });
    const child = logger.named("b");
    child.info("dropped");
    child.warn("kept");
    expect(lines).toEqual([`${TS} [WARN] a.b: kept`]);
  });

  test("fields render as key=value in insertion order; plain values stay bare", () => {
    const { logger, lines } = capture();
    logger.info("m", { peer: "10.0.0.1:8300", n: 3, ok: true, nothing: null, list: [1, 2] });
    expect(lines[0]).toBe(`${TS} [INFO] m peer=10.0.0.1:8300 n=3 ok=true nothing=null list=[1,2]`);
  });

  test("values with spaces, quotes, `=` or other white space are JSON-quoted", () => {
    const { logger, lines } = capture();
    logger.info("m", { a: "two words", b: 'say "hi"', c: "k=v", d: "tab\there", e: "line\nbreak" });
    expect(lines[0]).toBe(`${TS} [INFO] m a="two words" b="say \\"hi\\"" c="k=v" d="tab\\there" e="line\\nbreak"`);
  });

  test("an object value containing quotes is quoted as a whole", () => {
    const { logger, lines } = capture();
    logger.info("m", { obj: { a: "b" } });
    expect(lines[0]).toBe(`${TS} [INFO] m obj="{\\"a\\":\\"b\\"}"`);
  });

  test("an empty string renders as \"\" so the pair stays parseable", () => {
    const { logger, lines } = capture();
    logger.info("m", { reason: "", next: "x" });
    expect(lines[0]).toBe(`${TS} [INFO] m reason="" next=x`);
  });

  test("undefined fields are left out", () => {
    const { logger, lines } = capture();
    logger.info("m", { a: undefined, b: 1 });
    expect(lines[0]).toBe(`${TS} [INFO] m b=1`);
  });

  test("an Error renders as its message, quoted when needed", () => {
    const { logger, lines } = capture();
    logger.error("failed", { err: new Error("connection refused"), short: new TypeError("boom") });
    expect(lines[0]).toBe(`${TS} [ERROR] failed err="connection refused" short=boom`);
  });

  test("the message itself is not quoted", () => {
    const { logger, lines } = capture();
    logger.info('a "quoted" = message');
    expect(lines[0]).toBe(`${TS} [INFO] a "quoted" = message`);
  });
});

describe("json format", () => {
  test("one object per line with @timestamp, @level, @module, @message and the fields", () => {
    const { logger, lines } = capture("agent", { format: "json" });
    logger.named("http").warn("slow request", { path: "/v1/kv/a b", ms: 12, ok: false });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    expect(JSON.parse(lines[0]!)).toEqual({
      "@timestamp": TS,
      "@level": "warn",
      "@module": "agent.http",
      "@message": "slow request",
      path: "/v1/kv/a b",
      ms: 12,
      ok: false,
    });
  });

  test("the @ keys come first, in that order", () => {
    const { logger, lines } = capture("x", { format: "json" });
    logger.info("m", { z: 1, a: 2 });
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual(["@timestamp", "@level", "@module", "@message", "z", "a"]);
  });

  test("an Error field becomes its message; nested values stay structured", () => {
    const { logger, lines } = capture("", { format: "json" });
    logger.error("failed", { err: new Error("disk full"), meta: { tries: [1, 2] } });
    const obj = JSON.parse(lines[0]!);
    expect(obj["@module"]).toBe("");
    expect(obj.err).toBe("disk full");
    expect(obj.meta).toEqual({ tries: [1, 2] });
  });

  test("no fields: only the @ keys", () => {
    const { logger, lines } = capture("c", { format: "json" });
    logger.debug("m");
    expect(JSON.parse(lines[0]!)).toEqual({ "@timestamp": TS, "@level": "debug", "@module": "c", "@message": "m" });
  });
});

describe("level filtering", () => {
  const emitAll = (level: LogLevel) => {
    const { logger, lines } = capture("", { level });
    for (const l of LOG_LEVELS) logger[l](l);
    return lines.map((line) => line.slice(`${TS} [`.length, line.indexOf("]")));
  };

  test("each level lets through itself and everything more severe", () => {
    expect(emitAll("trace")).toEqual(["TRACE", "DEBUG", "INFO", "WARN", "ERROR"]);
    expect(emitAll("debug")).toEqual(["DEBUG", "INFO", "WARN", "ERROR"]);
    expect(emitAll("info")).toEqual(["INFO", "WARN", "ERROR"]);
    expect(emitAll("warn")).toEqual(["WARN", "ERROR"]);
    expect(emitAll("error")).toEqual(["ERROR"]);
  });

  test("the default level is info", () => {
    const lines: string[] = [];
    const logger = createLogger("", { now: () => T0, sink: (l) => lines.push(l) });
    logger.trace("t");
    logger.debug("d");
    logger.info("i");
    expect(lines).toEqual([`${TS} [INFO] i`]);
  });


  test("LOG_LEVELS runs from least to most severe", () => {
    expect(LOG_LEVELS).toEqual(["trace", "debug", "info", "warn", "error"]);
  });
});

describe("parseLogLevel", () => {
  test("accepts every level in any case", () => {
    for (const l of LOG_LEVELS) {
      expect(parseLogLevel(l)).toBe(l);
      expect(parseLogLevel(l.toUpperCase())).toBe(l);
    }
    expect(parseLogLevel("WaRn")).toBe("warn");
    expect(parseLogLevel("Info")).toBe("info");
  });

  test("returns undefined for unknown names", () => {
    for (const name of ["", "verbose", "warning", "err", "fatal", "off", " info", "info ", "trace\n"]) {
      expect(parseLogLevel(name)).toBeUndefined();
    }
  });
});

describe("memoryLogger", () => {
  test("records text lines with the epoch as timestamp, at trace by default", () => {
    const log = memoryLogger();
    log.trace("t", { k: "v w" });
    log.named("sub").error("e");
    expect(log.lines).toEqual(['1970-01-01T00:00:00.000Z [TRACE] t k="v w"', "1970-01-01T00:00:00.000Z [ERROR] sub: e"]);
  });

  test("lines is the live array", () => {
    const log = memoryLogger();
    const lines = log.lines;
    log.info("a");
    log.info("b");
    expect(lines).toHaveLength(2);
    expect(lines).toBe(log.lines);
  });

  test("respects its level", () => {
    const log = memoryLogger("warn");
    log.info("dropped");
    log.warn("kept");
    expect(log.lines).toEqual(["1970-01-01T00:00:00.000Z [WARN] kept"]);
  });
});

describe("silentLogger", () => {
  test("accepts every call, and named() returns a logger too", () => {
    const log = silentLogger();
    for (const l of LOG_LEVELS) expect(() => log[l]("m", { a: 1 })).not.toThrow();
    expect(() => log.named("x").named("y").error("m")).not.toThrow();
  });
});

describe("hostile field values", () => {
  test("bigints and cycles never make a log call throw", () => {
    const log = memoryLogger();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    log.info("stats", { term: 5n, nested: { n: 7n }, cyclic });
    expect(log.lines[0]).toContain("term=5");
    expect(log.lines[0]).toContain('nested="{\\"n\\":\\"7\\"}"');
    expect(log.lines[0]).toContain("[circular]");
    const json: string[] = [];
    createLogger("x", { format: "json", sink: (l) => json.push(l) }).info("m", { big: 1n });
    expect(JSON.parse(json[0]!).big).toBe("1");
  });

  test("JSON fields cannot overwrite the entry's own keys", () => {
    const json: string[] = [];
    createLogger("x", { format: "json", sink: (l) => json.push(l) }).info("real", { "@message": "forged", "@level": "error" });
    const obj = JSON.parse(json[0]!);
    expect(obj["@message"]).toBe("real");
    expect(obj["@level"]).toBe("info");
    expect(obj["_@message"]).toBe("forged");
  });

  test("line breaks and control characters cannot split or colour a text entry", () => {
    const log = memoryLogger();
    log.warn("two\nlines", { "bad key": "v", value: "a\u001b[31mred" });
    expect(log.lines[0]!.split("\n").length).toBe(1);
    expect(log.lines[0]).toContain('"two\\nlines"');
    expect(log.lines[0]).toContain('"bad key"=v');
    expect(log.lines[0]).toContain('value="a\\u001b[31mred"');
  });
});

describe("log taps (the monitor's view)", () => {
  test("a tap sees lines at its own level whatever the logger's, in its own format; removed, it sees nothing", () => {
    const taps = new LogTaps();
    const sink: string[] = [];
    const log = createLogger("agent", { level: "warn", sink: (l) => sink.push(l), now: () => 0, taps }).named("http");
    const debugText: string[] = [];
    const infoJson: string[] = [];
    const offDebug = taps.add({ level: "debug", format: "text", write: (l) => debugText.push(l) });
    taps.add({ level: "info", format: "json", write: (l) => infoJson.push(l) });
    log.trace("not for anyone");
    log.debug("d", { k: 1 });
    log.info("i");
    log.warn("w");
    expect(sink).toEqual(["1970-01-01T00:00:00.000Z [WARN] agent.http: w"]);
    expect(debugText).toEqual([
      "1970-01-01T00:00:00.000Z [DEBUG] agent.http: d k=1",
      "1970-01-01T00:00:00.000Z [INFO] agent.http: i",
      "1970-01-01T00:00:00.000Z [WARN] agent.http: w",
    ]);
    expect(infoJson.map((l) => JSON.parse(l)["@message"])).toEqual(["i", "w"]);
    offDebug();
    log.debug("gone");
    expect(debugText.length).toBe(3);
    expect(taps.minIndex).toBe(2);
  });
});
