import { describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import type { StateAccess } from "../http/index.ts";
import { systemClock } from "../platform/index.ts";
import { createStateStore, writeSnapshotArchive, type StateCommand } from "../state/index.ts";
import { snapshotApiOver } from "./snapshot_api.ts";

function recording() {
  const writes: StateCommand[] = [];
  const state = { write: async (c: StateCommand) => (writes.push(c), { type: "ok" as const }), read: async () => { throw new Error("unused"); } } as unknown as StateAccess;
  return { writes, api: snapshotApiOver(state, systemClock()) };
}

/** The error `p` rejects with. */
const thrown = (p: Promise<unknown>): Promise<Error & { statusCode?: number }> => p.then(() => new Error("no error"), (e: Error) => e);

describe("snapshot restore", () => {
  test("sends the archive's state as one restore command", async () => {
    const { writes, api } = recording();
    const state = createStateStore({ clock: systemClock() }).snapshot();
    await api.restore(writeSnapshotArchive(state, { index: 1, term: 1, nowMs: 0 }), undefined);
    expect(writes).toEqual([{ type: "restore", data: state }]);
  });

  test("refuses a bad archive with 400 and one over the size limit (a gzip bomb) with 413, sending nothing", async () => {
    const { writes, api } = recording();
    const bad = await thrown(api.restore(new TextEncoder().encode("not gzip"), undefined));
    expect([bad.statusCode, bad.message]).toEqual([400, expect.stringMatching(/^not a snapshot: the file is not gzip data/)]);
    const header = new Uint8Array(512);
    header.set(new TextEncoder().encode("state.bin"));
    header.set(new TextEncoder().encode("77777777777\0"), 124); // 8 GiB declared
    const bomb = await thrown(api.restore(gzipSync(new Uint8Array([...header, ...new Uint8Array(1 << 20)])), undefined));
    expect([bomb.statusCode, bomb.message]).toEqual([413, expect.stringMatching(/^snapshot is too large: state.bin is 8589934591 bytes/)]);
    expect(writes).toEqual([]);
  });
});
