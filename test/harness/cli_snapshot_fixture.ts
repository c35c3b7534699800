/**
 * For `causeway snapshot` tests: builds snapshot files in Consul's layout (a gzipped ustar archive of
 * meta.json, state.bin and SHA256SUMS, as hashicorp/consul snapshot/archive.go writes it), optionally
 * corrupted in ways the verifier must catch.
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { concatBytes } from "../../src/lib/index.ts";

/** A minimal ustar archive of regular files (names under 100 bytes). */
export function tar(files: ReadonlyArray<readonly [string, Uint8Array]>): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (const [name, data] of files) {
    const header = new Uint8Array(512);
    const put = (at: number, s: string) => header.set(new TextEncoder().encode(s), at);
    put(0, name);
    put(100, "0000600\0");
    put(108, "0000000\0");
    put(116, "0000000\0");
    put(124, `${data.length.toString(8).padStart(11, "0")}\0`);
    put(136, "00000000000\0");
    header[156] = 0x30;
    put(257, "ustar\0");
    put(263, "00");
    header.fill(0x20, 148, 156);
    const sum = header.reduce((a, b) => a + b, 0);
    put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
    blocks.push(header, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  blocks.push(new Uint8Array(1024));
  return concatBytes(blocks);
}

export interface ConsulSnapshotOptions {
  readonly meta: Readonly<Record<string, unknown>>;
  readonly state: Uint8Array;
  /** Replace state.bin after the checksums were computed (to prove verification bites). */
  readonly tamperedState?: Uint8Array;
  /** Leave SHA256SUMS out. */
  readonly withoutSums?: boolean;
}

/** A snapshot file in Consul's layout. */
export function consulSnapshot(options: ConsulSnapshotOptions): Uint8Array {
  const meta = new TextEncoder().encode(JSON.stringify(options.meta));
  const hex = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
  const sums = new TextEncoder().encode(`${hex(meta)}  meta.json\n${hex(options.state)}  state.bin\n`);
  const files: Array<[string, Uint8Array]> = [["meta.json", meta], ["state.bin", options.tamperedState ?? options.state]];
  if (!options.withoutSums) files.push(["SHA256SUMS", sums]);
  return new Uint8Array(gzipSync(tar(files)));
}
