import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../platform/index.ts";
import { simFileSystem } from "../../test/harness/sim_fs.ts";
import { ACL_BOOTSTRAP_RESET_FILE, bootstrapResetFile } from "./acl_bootstrap_file.ts";

describe("the ACL bootstrap reset file", () => {
  test("read as Go's %d reads it; none or garbage is 0; removed on request", async () => {
    const fs = simFileSystem();
    fs.mkdirp("/data");
    const log = memoryLogger("debug");
    const f = bootstrapResetFile(fs, "/data", log);
    expect(f.read()).toBe(0);
    for (const [text, want] of [["  42\n", 42], ["7 trailing words", 7], ["+9", 9], ["x12", 0], ["", 0]] as const) {
      await fs.writeDurably(`/data/${ACL_BOOTSTRAP_RESET_FILE}`, text);
      expect(f.read(), JSON.stringify(text)).toBe(want);
    }
    f.remove();
    expect(fs.read(`/data/${ACL_BOOTSTRAP_RESET_FILE}`)).toBeUndefined();
    expect(log.lines.some((l) => l.includes("failed to parse bootstrap reset index path"))).toBe(true);
  });
});
