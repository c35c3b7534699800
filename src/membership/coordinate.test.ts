import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import {
  COORDINATE_DEFAULTS, CodecError, DimensionalityConflictError, applyForce, coordinate, decodeCoordinatePayload, distanceMs,
  encodeCoordinatePayload, isCompatible, isValidCoordinate, newCoordinate, rawDistance, unitVectorAt, type CoordinateConfig,
} from "./index.ts";

const near = (got: number, want: number, eps = 1e-9) => expect(Math.abs(got - want)).toBeLessThanOrEqual(eps);
const nearVec = (got: readonly number[], want: readonly number[]) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => near(g, want[i]!));
};
const cfg3: CoordinateConfig = { ...COORDINATE_DEFAULTS, dimensionality: 3, heightMin: 0 };
const at = (vec: number[], o: { adj?: number; height?: number } = {}) => coordinate(vec, 1.5, o.adj ?? 0, o.height ?? 0);

describe("coordinate values", () => {
  test("defaults are serf's DefaultConfig", () => {
    expect(COORDINATE_DEFAULTS).toEqual({
      dimensionality: 8, vivaldiErrorMax: 1.5, vivaldiCE: 0.25, vivaldiCC: 0.25, adjustmentWindowSize: 20, heightMin: 10e-6, latencyFilterSize: 3, gravityRho: 150,
    });
  });

  test("a new coordinate sits at the origin with maximal error and minimal height", () => {
    const c = newCoordinate(COORDINATE_DEFAULTS);
    expect(c).toEqual({ Vec: [0, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 10e-6 });
    expect(Object.isFrozen(c) && Object.isFrozen(c.Vec)).toBe(true);
  });

  const fields = ["Vec0", "Vec7", "Error", "Adjustment", "Height"] as const;
  for (const field of fields) {
    for (const bad of [NaN, Infinity, -Infinity]) {
      test(`${field} = ${bad} makes a coordinate invalid; 0 is valid`, () => {
        const make = (v: number) => {
          const c = newCoordinate(COORDINATE_DEFAULTS);
          const vec = [...c.Vec];
          if (field === "Vec0") vec[0] = v;
          if (field === "Vec7") vec[7] = v;
          return coordinate(vec, field === "Error" ? v : c.Error, field === "Adjustment" ? v : c.Adjustment, field === "Height" ? v : c.Height);
        };
        expect(isValidCoordinate(make(bad))).toBe(false);
        expect(isValidCoordinate(make(0))).toBe(true);
      });
    }
  }

  test("compatibility is equal dimensionality", () => {
    const a = newCoordinate(cfg3), b = newCoordinate(cfg3), alien = newCoordinate({ ...cfg3, dimensionality: 2 });
    expect(isCompatible(a, b) && isCompatible(b, a) && isCompatible(alien, alien)).toBe(true);
    expect(isCompatible(a, alien) || isCompatible(alien, b)).toBe(false);
    expect(() => distanceMs(a, alien)).toThrow(DimensionalityConflictError);
    expect(() => applyForce(cfg3, seededRng(1), 1, a, alien)).toThrow(DimensionalityConflictError);
  });
});

describe("distance", () => {
  const euclid = 4.104875150354758; // |(-0.5,1.3,2.4) - (1.2,-2.3,3.4)|
  const table: { name: string; a: Parameters<typeof at>[1]; b: Parameters<typeof at>[1]; raw: number; dist: number }[] = [
    { name: "plain Euclidean", a: {}, b: {}, raw: euclid, dist: euclid },
    { name: "a negative total adjustment is ignored", a: { adj: -1e6 }, b: {}, raw: euclid, dist: euclid },
    { name: "positive adjustments add", a: { adj: 0.1 }, b: { adj: 0.2 }, raw: euclid, dist: euclid + 0.3 },
    { name: "heights add to both", a: { adj: 0.1, height: 0.7 }, b: { adj: 0.2, height: 0.1 }, raw: euclid + 0.8, dist: euclid + 0.3 + 0.8 },
    { name: "a huge adjustment does not enter the raw distance", a: { adj: 1e6 }, b: {}, raw: euclid, dist: (euclid + 1e6) },
  ];
  for (const row of table) {
    test(row.name, () => {
      const a = at([-0.5, 1.3, 2.4], row.a), b = at([1.2, -2.3, 3.4], row.b);
      near(rawDistance(a, b), row.raw);
      near(rawDistance(b, a), row.raw);
      near(distanceMs(a, b), row.dist * 1000, 1e-6);
      near(distanceMs(b, a), row.dist * 1000, 1e-6);
    });
  }

  test("distance to itself is zero (no height)", () => {
    const a = at([-0.5, 1.3, 2.4]);
    near(distanceMs(a, a), 0);
  });
});

describe("forces", () => {
  test("a force pushes away along the unit vector, from anywhere", () => {
    const rng = seededRng(1);
    const origin = newCoordinate(cfg3);
    const above = at([0, 0, 2.9]);
    const c = applyForce(cfg3, rng, 5.3, origin, above);
    nearVec(c.Vec, [0, 0, -5.3]);
    const c2 = applyForce(cfg3, rng, 2.0, c, at([3.4, 0, -5.3]));
    nearVec(c2.Vec, [-2.0, 0, -5.3]);
  });

  test("coincident points move one unit in a random direction drawn from the rng", () => {
    const origin = newCoordinate(cfg3);
    const a = applyForce(cfg3, seededRng(7), 1.0, origin, origin);
    near(distanceMs(origin, a), 1000, 1e-6);
    const b = applyForce(cfg3, seededRng(7), 1.0, origin, origin);
    expect(b.Vec).toEqual(a.Vec); // same seed, same direction
    expect(applyForce(cfg3, seededRng(8), 1.0, origin, origin).Vec).not.toEqual(a.Vec);
  });

  test("the height grows with a push, and never drops below the minimum", () => {
    const cfg = { ...cfg3, heightMin: 10e-6 };
    const origin = newCoordinate(cfg);
    const above = coordinate([0, 0, 2.9], 1.5, 0, cfg.heightMin);
    const up = applyForce(cfg, seededRng(1), 5.3, origin, above);
    nearVec(up.Vec, [0, 0, -5.3]);
    near(up.Height, cfg.heightMin + (5.3 * 2 * cfg.heightMin) / 2.9, 1e-12);
    const down = applyForce(cfg, seededRng(1), -5.3, origin, above);
    nearVec(down.Vec, [0, 0, 5.3]);
    expect(down.Height).toBe(cfg.heightMin);
  });

  test("unit vectors: normalized with the distance; coincident: random unit, magnitude 0", () => {
    const { unit, mag } = unitVectorAt(seededRng(1), [1, 2, 3], [0.5, 0.6, 0.7]);
    nearVec(unit, [0.18257418583505536, 0.511207720338155, 0.8398412548412546]);
    near(mag, Math.hypot(0.5, 1.4, 2.3));
    const same = unitVectorAt(seededRng(1), [1, 2, 3], [1, 2, 3]);
    near(Math.hypot(...same.unit), 1);
    expect(same.mag).toBe(0);
    // An rng that only returns 0.5 gives the zero vector: fall back to the first axis.
    const flat = { next: () => 0.5, int: () => 0, bytes: (n: number) => new Uint8Array(n) };
    expect(unitVectorAt(flat, [1, 2], [1, 2])).toEqual({ unit: [1, 0], mag: 0 });
  });
});

describe("ack payload", () => {
  test("round-trips exactly, 90 bytes for 8 dimensions", () => {
    const c = coordinate([0.001, -0.002, 3e-5, 0, 1, 2, 3, 4], 0.42, -1e-4, 2.5e-4);
    const b = encodeCoordinatePayload(c);
    expect(b.length).toBe(90);
    expect(b[0]).toBe(1);
    expect(decodeCoordinatePayload(b)).toEqual(c);
  });

  test("NaN decodes (the client rejects it), other versions and bad lengths do not", () => {
    const c = coordinate([NaN, 0, 0], 1, 0, 0);
    expect(isValidCoordinate(decodeCoordinatePayload(encodeCoordinatePayload(c)))).toBe(false);
    const b = encodeCoordinatePayload(at([1, 2, 3]));
    expect(() => decodeCoordinatePayload(Uint8Array.of(2, ...b.subarray(1)))).toThrow(CodecError);
    expect(() => decodeCoordinatePayload(b.subarray(0, b.length - 1))).toThrow(CodecError);
    expect(() => decodeCoordinatePayload(Uint8Array.of(...b, 0))).toThrow(CodecError);
    expect(() => decodeCoordinatePayload(new Uint8Array(0))).toThrow(CodecError);
  });
});
