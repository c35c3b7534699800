/**
 * A directory of small JSON records, one file per ID (named by the SHA-256 of the ID, so IDs may hold
 * any character), written durably (fsync, atomic replace, mode 0600). Used for state an agent keeps
 * across restarts. A write that fails is reported to `onError`, not thrown; a file that does not parse
 * is skipped and reported, never fatal.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { readFileIfExists, writeFileDurably } from "./files.ts";

export interface RecordDir {
  save(id: string, record: unknown): void;
  /** Removes the record of `id`; nothing happens when there is none. */
  remove(id: string): void;
  /** Every record that parses, in file-name order. */
  list(): unknown[];
}

export function openRecordDir(dir: string, report: (what: "write failed" | "unreadable", file: string, error: unknown) => void): RecordDir {
  const fileOf = (id: string) => join(dir, `${bytesToHex(sha256(new TextEncoder().encode(id)))}.json`);
  return {
    save(id, record) {
      const file = fileOf(id);
      try {
        writeFileDurably(file, JSON.stringify(record), 0o600);
      } catch (err) {
        report("write failed", file, err);
      }
    },
    remove: (id) => rmSync(fileOf(id), { force: true }),
    list() {
      let names: string[];
      try {
        names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();
      } catch {
        return [];
      }
      return names.flatMap((name) => {
        const file = join(dir, name);
        try {
          return [JSON.parse(new TextDecoder().decode(readFileIfExists(file) ?? new Uint8Array())) as unknown];
        } catch (err) {
          report("unreadable", file, err);
          return [];
        }
      });
    },
  };
}
