/**
 * Test kit: a temporary directory for PEM files handed to the openssl binary (Debian's, at
 * /usr/bin/openssl), removed after the test file. `openssl` never throws: it returns whether the
 * command succeeded and its stdout plus stderr.
 */
import { afterAll } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const OPENSSL = "/usr/bin/openssl";

export function opensslWorkspace(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  /** Writes `text` to a fresh file in the workspace and returns its path. */
  const file = (text: string) => {
    const p = join(dir, `f${n++}.pem`);
    writeFileSync(p, text);
    return p;
  };
  const openssl = (...args: string[]) => {
    const r = spawnSync(OPENSSL, args, { encoding: "utf8" });
    return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
  };
  /** openssl's text dump of a PEM certificate. */
  const text = (pem: string) => openssl("x509", "-text", "-noout", "-in", file(pem)).out;
  return { dir, file, openssl, text };
}
