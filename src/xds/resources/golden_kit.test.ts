/**
 * Test kit: the golden-file checks every resource family shares. For one scenario's resources (Any
 * lists by kind): the JSON matches `<dir>/<name>.golden.json` (UPDATE_GOLDEN=1 rewrites it), every
 * resource passes the strict decode and validate rules, and a second render gives the same bytes.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toBinary, toJson } from "@bufbuild/protobuf";
import { AnySchema, type Any } from "@bufbuild/protobuf/wkt";
import { envoyRegistry } from "./index.ts";
import { strictCheckAny } from "./strict_kit.test.ts";

export type AnyLists = Readonly<Record<string, readonly Any[]>>;

const update = process.env.UPDATE_GOLDEN === "1";
const hex = (list: readonly Any[]) => list.map((a) => Buffer.from(toBinary(AnySchema, a)).toString("hex"));

/** Runs the shared checks on scenario `name` (rendered twice) and returns the first rendering. */
export function expectGolden<R extends AnyLists>(dir: string, name: string, render: () => R): R {
  const r = render();
  const doc = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.map((a) => toJson(AnySchema, a, { registry: envoyRegistry }))]));
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const file = join(dir, `${name}.golden.json`);
  if (update) writeFileSync(file, text);
  expect(existsSync(file)).toBe(true);
  expect(text).toBe(readFileSync(file, "utf8"));

  const violations: string[] = [];
  for (const [kind, list] of Object.entries(r)) for (const a of list) violations.push(...strictCheckAny(a.typeUrl, a.value, kind));
  expect(violations).toEqual([]);

  const again = render();
  for (const kind of Object.keys(r)) expect(hex(again[kind]!)).toEqual(hex(r[kind]!));
  return r;
}

/** A test that every golden file in `dir` belongs to a scenario. */
export function noStaleGoldens(dir: string, scenarios: readonly string[]): void {
  test("no stale golden files", () => {
    const files = readdirSync(dir).filter((f) => f.endsWith(".golden.json")).map((f) => f.replace(/\.golden\.json$/, ""));
    expect(files.sort()).toEqual([...scenarios].sort());
  });
}
