/** Shared helpers for the bexpr tests (no tests here). */
import { expect } from "bun:test";
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, FilterError, type Schema } from "./index.ts";

/** The FilterError compileFilter throws for `expr`; fails the test when it compiles or throws anything else. */
export function errorOf(expr: string, schema: Schema = CHECK_SERVICE_NODE_SCHEMA): FilterError {
  try {
    compileFilter(expr, schema);
  } catch (e) {
    expect(e).toBeInstanceOf(FilterError);
    return e as FilterError;
  }
  throw new Error(`expected ${JSON.stringify(expr)} to be rejected`);
}
