/**
 * Reading a snapshot file's metadata, for `snapshot inspect` and the verify step of `snapshot save`:
 * the archive that `/v1/snapshot` serves (src/main/snapshot_archive.ts: a gzipped tar of meta.json,
 * state.bin and SHA256SUMS, as Consul's snapshot/archive.go lays it out), verified in full.
 */
import { readSnapshotArchive, type SnapshotMeta } from "../../../state/index.ts";

export type { SnapshotMeta };

/** The metadata of a verified snapshot; throws with the reason when the file is not one or is damaged. */
export function readSnapshotMeta(bytes: Uint8Array): SnapshotMeta {
  return readSnapshotArchive(bytes).meta;
}
