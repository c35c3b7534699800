import { describe, expect, test } from "bun:test";
import { resourceVersion, typeVersion } from "./hash.ts";

// Pinned values (computed with @noble/hashes, the previous implementation): versions must not change
// between releases, or every delta client reconnecting with initial_resource_versions is resent everything.
describe("xds versions", () => {
  test("resource version: first 128 bits of SHA-256 of the bytes, hex", () => {
    expect(resourceVersion(new Uint8Array([1, 2, 3]))).toBe("039058c6f2c0cb492c533b0a4d14ef77");
    expect(resourceVersion(new Uint8Array())).toBe("e3b0c44298fc1c149afbf4c8996fb924");
  });

  test("type version: SHA-256 over `name NUL version LF` in UTF-8, in the order given", () => {
    expect(typeVersion([["a", "1"], ["ü-b", "2"]])).toBe("c80a8080af8445ee7d4a01eb15341d3d");
    expect(typeVersion([])).toBe("e3b0c44298fc1c149afbf4c8996fb924");
    expect(typeVersion([["ü-b", "2"], ["a", "1"]])).not.toBe(typeVersion([["a", "1"], ["ü-b", "2"]]));
  });
});
