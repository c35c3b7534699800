import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GossipKey, Keyring } from "../membership/index.ts";
import { memoryLogger, seededRng } from "../platform/index.ts";
import { ConfigError } from "./config.ts";
import { SERF_LAN_KEYRING, SERF_WAN_KEYRING, setupKeyrings } from "./keyring_files.ts";

const rng = seededRng(9);
const [k1, k2, k3] = [0, 1, 2].map(() => GossipKey.fromBytes(rng.bytes(32)).toBase64()) as [string, string, string];
const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), "causeway-keyring-files-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const read = (dir: string, file: string) => JSON.parse(readFileSync(join(dir, file), "utf8")) as string[];

describe("gossip keyring files", () => {
  test("encrypt with no files: both files are created with just that key, private to the agent", () => {
    const dir = dataDir();
    const { lan, wan } = setupKeyrings({ encrypt: k1, dataDir: dir, wan: true, logger: memoryLogger() });
    expect(lan.keyring!.exportKeys()).toEqual([k1]);
    expect(wan!.keyring!.exportKeys()).toEqual([k1]);
    expect(lan.keyring).not.toBe(wan!.keyring);
    expect(read(dir, SERF_LAN_KEYRING)).toEqual([k1]);
    expect(read(dir, SERF_WAN_KEYRING)).toEqual([k1]);
    expect(statSync(join(dir, SERF_LAN_KEYRING)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "serf")).mode & 0o777).toBe(0o700);
  });

  test("an existing file wins over encrypt, with Consul's warning when it lacks that key", () => {
    const dir = dataDir();
    mkdirSync(join(dir, "serf"));
    writeFileSync(join(dir, SERF_LAN_KEYRING), JSON.stringify([k2, k1]));
    const log = memoryLogger();
    const { lan, wan } = setupKeyrings({ encrypt: k3, dataDir: dir, wan: false, logger: log });
    expect(wan).toBeUndefined();
    expect(lan.keyring!.exportKeys()).toEqual([k2, k1]);
    expect(log.lines.join("\n")).toContain("LAN keyring doesn't include key provided with -encrypt, using keyring");
    const quiet = memoryLogger();
    setupKeyrings({ encrypt: k1, dataDir: dir, wan: false, logger: quiet });
    expect(quiet.lines.join("\n")).not.toContain("doesn't include");
    expect(read(dir, SERF_LAN_KEYRING)).toEqual([k2, k1]); // not rewritten
  });

  test("without encrypt a keyring file still enables encryption; with neither there is none and no file", () => {
    const dir = dataDir();
    expect(setupKeyrings({ encrypt: "", dataDir: dir, wan: true, logger: memoryLogger() }).lan.keyring).toBeUndefined();
    expect(existsSync(join(dir, "serf"))).toBe(false);
    mkdirSync(join(dir, "serf"));
    writeFileSync(join(dir, SERF_LAN_KEYRING), JSON.stringify([k3]));
    const { lan, wan } = setupKeyrings({ encrypt: "", dataDir: dir, wan: true, logger: memoryLogger() });
    expect(lan.keyring!.exportKeys()).toEqual([k3]);
    expect(wan!.keyring).toBeUndefined();
  });

  test("persist rewrites the file with the current keys, primary first", () => {
    const dir = dataDir();
    const { lan } = setupKeyrings({ encrypt: k1, dataDir: dir, wan: false, logger: memoryLogger() });
    lan.keyring!.install(k2);
    lan.keyring!.use(k2);
    lan.persist(lan.keyring!);
    expect(read(dir, SERF_LAN_KEYRING)).toEqual([k2, k1]);
    expect(statSync(join(dir, SERF_LAN_KEYRING)).mode & 0o777).toBe(0o600);
    const again = setupKeyrings({ encrypt: k1, dataDir: dir, wan: false, logger: memoryLogger() });
    expect(again.lan.keyring!.exportKeys()).toEqual([k2, k1]);
    expect(again.lan.keyring!.primary.equals(new Keyring(k2).primary)).toBe(true);
  });

  test("a bad encrypt key is a ConfigError; a bad file is an error naming it, never quoting it", () => {
    expect(() => setupKeyrings({ encrypt: "c2hvcnQ=", dataDir: dataDir(), wan: false, logger: memoryLogger() })).toThrow(ConfigError);
    const dir = dataDir();
    mkdirSync(join(dir, "serf"));
    writeFileSync(join(dir, SERF_LAN_KEYRING), `["${k1}", "secret-but-broken"]`);
    let message = "";
    try {
      setupKeyrings({ encrypt: "", dataDir: dir, wan: false, logger: memoryLogger() });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(join(dir, SERF_LAN_KEYRING));
    expect(message).not.toContain(k1);
    expect(message).not.toContain("secret-but-broken");
  });
});
