import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRecordDir } from "./record_dir.ts";

describe("record dir", () => {
  test("one file per ID named by its hash; damaged files are reported and skipped; a missing dir lists nothing", () => {
    const root = mkdtempSync(join(tmpdir(), "cw-records-"));
    try {
      const reports: string[] = [];
      const dir = openRecordDir(join(root, "r"), (what, file) => reports.push(`${what} ${file.slice(root.length)}`));
      expect(dir.list()).toEqual([]);
      dir.save("a/b é", { x: 1 });
      dir.save("a/b é", { x: 2 });
      dir.save("c", [3]);
      const names = readdirSync(join(root, "r"));
      expect(names.every((n) => /^[0-9a-f]{64}\.json$/.test(n))).toBe(true);
      writeFileSync(join(root, "r", "zz.json"), "{");
      expect(dir.list()).toContainEqual({ x: 2 });
      expect(dir.list()).toHaveLength(2);
      expect(reports).toEqual(["unreadable /r/zz.json", "unreadable /r/zz.json"]);
      dir.remove("a/b é");
      dir.remove("never");
      expect(dir.list()).toEqual([[3]]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
