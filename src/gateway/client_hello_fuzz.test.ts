/**
 * Seeded fuzzing of the ClientHello parser: random first bytes and random mutations of real hellos,
 * fed in random fragments. Properties: it never throws, never consumes more than its bound, always
 * decides once the bound is reached, and the answer does not depend on how the bytes were split.
 * `HELLO_FUZZ_SEED=<n>` replays a run; `HELLO_FUZZ_ITERATIONS=<n>` runs longer. A failure names its seed.
 */
import { beforeAll, expect, test } from "bun:test";
import { seededRng, type Rng } from "../platform/index.ts";
import { createClientHelloParser, parseClientHello, type ClientHelloResult } from "./client_hello.ts";
import { captureNodeHello, captureOpensslHello, haveOpenssl, hello } from "./client_hello_kit.test.ts";

const SEED = Number(process.env.HELLO_FUZZ_SEED ?? 20_240_601);
const ITERATIONS = Number(process.env.HELLO_FUZZ_ITERATIONS ?? 10_000);

const corpus: Uint8Array[] = [];

beforeAll(async () => {
  corpus.push(await captureNodeHello({ servername: "web.default.dc1.internal.example.consul", ALPNProtocols: ["h2"] }));
  corpus.push(await captureNodeHello({ maxVersion: "TLSv1.2" }));
  if (haveOpenssl) corpus.push(await captureOpensslHello(["-servername", "a.b.c"]));
  corpus.push(hello({ serverName: "x.y", alpn: ["h2", "http/1.1"] }, 40));
  corpus.push(hello({ noExtensions: true }));
});

/** Random first bytes, biased toward the prefixes that get past the first checks. */
function randomBytes(rng: Rng): Uint8Array {
  const data = rng.bytes(rng.int(700));
  const roll = rng.int(4);
  if (roll > 0 && data.length > 0) data[0] = roll === 1 ? 0x16 : roll === 2 ? 0x80 | rng.int(128) : data[0]!;
  if (roll === 1 && data.length > 2) data[1] = 3;
  if (roll === 1 && data.length > 5 && rng.int(2) === 0) data[5] = 1;
  return data;
}

/** A real hello with 1-8 random edits: byte changes, truncation, insertion, deletion, length nudges. */
function mutate(rng: Rng, source: Uint8Array): Uint8Array {
  let data = [...source];
  for (let n = 1 + rng.int(8); n > 0 && data.length > 0; n--) {
    const at = rng.int(data.length);
    switch (rng.int(6)) {
      case 0:
        data[at] = rng.int(256);
        break;
      case 1:
        data[at] = data[at]! ^ (1 << rng.int(8));
        break;
      case 2:
        data = data.slice(0, at);
        break;
      case 3:
        data.splice(at, 0, ...rng.bytes(1 + rng.int(16)));
        break;
      case 4:
        data.splice(at, 1 + rng.int(16));
        break;
      default:
        data[at] = (data[at]! + (rng.int(2) === 0 ? 1 : 255)) & 0xff;
    }
  }
  return Uint8Array.from(data);
}

function feedInPieces(rng: Rng, data: Uint8Array, maxBytes: number): { result: ClientHelloResult; consumed: number } {
  const p = createClientHelloParser({ maxBytes });
  let result = p.result;
  for (let pos = 0; pos < data.length; ) {
    const end = Math.min(data.length, pos + 1 + rng.int(rng.int(2) === 0 ? 8 : 600));
    result = p.feed(data.subarray(pos, end));
    pos = end;
  }
  return { result, consumed: p.consumed };
}

function check(rng: Rng, data: Uint8Array, maxBytes: number): ClientHelloResult {
  const whole = parseClientHello(data, { maxBytes });
  const pieces = feedInPieces(rng, data, maxBytes);
  expect(pieces.result).toEqual(whole);
  expect(pieces.consumed).toBeLessThanOrEqual(maxBytes);
  if (data.length >= maxBytes) expect(whole.state).not.toBe("more");
  return whole;
}

function run(name: string, body: (rng: Rng) => ClientHelloResult): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < ITERATIONS; i++) {
    const seed = SEED + i;
    try {
      const r = body(seededRng(seed));
      const key = r.state === "failed" ? r.reason : r.state;
      counts[key] = (counts[key] ?? 0) + 1;
    } catch (err) {
      throw new Error(`${name} failed with HELLO_FUZZ_SEED=${seed} (iteration ${i}): ${err instanceof Error ? err.stack : String(err)}`);
    }
  }
  return counts;
}

test("random first bytes: no throw, bounded, split-independent", () => {
  const counts = run("random bytes", (rng) => check(rng, randomBytes(rng), rng.int(4) === 0 ? 1 + rng.int(400) : 16384));
  // The bias above must reach the deeper checks, or the run proves little (short replays may not).
  if (ITERATIONS >= 5000) expect(Object.keys(counts).sort()).toEqual(["malformed", "more", "not_tls", "sslv2", "too_large"]);
});

test("mutated real ClientHellos: no throw, bounded, split-independent", () => {
  const counts = run("mutation", (rng) => {
    const source = corpus[rng.int(corpus.length)]!;
    return check(rng, mutate(rng, source), rng.int(8) === 0 ? 1 + rng.int(source.length) : 16384);
  });
  if (ITERATIONS >= 5000) {
    expect(counts.done).toBeGreaterThan(0);
    expect(counts.malformed).toBeGreaterThan(0);
  }
});
