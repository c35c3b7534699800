/**
 * The ACL bootstrap reset file (Consul 1.8 acl_endpoint.go fileBootstrapResetIndex and
 * removeBootstrapResetFile): an operator writes the reset index that `/v1/acl/bootstrap` reported into
 * `<data_dir>/acl-bootstrap-reset` to allow one more bootstrap. The number is read as Go's `%d` reads
 * it (leading spaces allowed, then an optional sign and digits); an unreadable or unparseable file
 * counts as none (logged).
 */
import { join } from "node:path";
import type { FileSystem, Logger } from "../platform/index.ts";

export const ACL_BOOTSTRAP_RESET_FILE = "acl-bootstrap-reset";

export interface BootstrapResetFile {
  /** The reset index in the file, 0 when there is none. */
  read(): number;
  /** Removes the file (once its index was read and matched, whether or not the bootstrap then works). */
  remove(): void;
}

export function bootstrapResetFile(fs: FileSystem, dataDir: string, logger: Logger): BootstrapResetFile {
  const path = join(dataDir, ACL_BOOTSTRAP_RESET_FILE);
  return {
    read() {
      let raw: Uint8Array | undefined;
      try {
        raw = fs.read(path);
      } catch (err) {
        logger.error("bootstrap: failed to read path", { path, error: err });
        return 0;
      }
      if (!raw) return 0;
      const m = /^\s*\+?(\d+)/.exec(new TextDecoder().decode(raw));
      if (!m || !Number.isSafeInteger(Number(m[1]))) {
        logger.error("failed to parse bootstrap reset index path", { path });
        return 0;
      }
      return Number(m[1]);
    },
    remove() {
      try {
        fs.remove(path);
      } catch (err) {
        logger.warn("failed to remove bootstrap file", { error: err });
      }
    },
  };
}
