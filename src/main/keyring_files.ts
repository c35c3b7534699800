/**
 * The gossip keyrings on disk, as Consul's agent keeps them (agent/keyring.go and setupKeyrings in
 * agent/agent.go): `<data_dir>/serf/local.keyring` for the LAN pool and `<data_dir>/serf/remote.keyring`
 * for the WAN pool, each a JSON array of base64 keys, primary first, written with mode 0600.
 *
 * At start: with `encrypt` set, a missing file is created holding just that key; an existing file wins
 * over `encrypt` (a rotated key survives restarts), with Consul's warning when it does not hold the
 * `encrypt` key. Without `encrypt`, an existing file still enables encryption. Every change made by a
 * keyring operation is written back through `persist`.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { formatKeyringFile, InvalidKeyError, Keyring, parseKeyringFile } from "../membership/index.ts";
import { readFileIfExists, writeFileDurably, type Logger } from "../platform/index.ts";
import { ConfigError } from "./config.ts";

export const SERF_LAN_KEYRING = "serf/local.keyring";
export const SERF_WAN_KEYRING = "serf/remote.keyring";

/** One pool's keyring: absent when encryption is off, and how to make a change durable. */
export interface PoolKeyring {
  readonly keyring?: Keyring;
  readonly file: string;
  /** Writes the keyring file atomically and durably; throws on an I/O error. */
  persist(keyring: Keyring): void;
}

/**
 * Loads (creating from `encrypt` where missing) the LAN keyring and, when `wan`, the WAN keyring.
 * Throws ConfigError for a bad `encrypt` key, Error naming the file for one that does not parse.
 */
export function setupKeyrings(o: { encrypt: string; dataDir: string; wan: boolean; logger: Logger }): { lan: PoolKeyring; wan?: PoolKeyring } {
  if (o.encrypt !== "") {
    try {
      Keyring.fromBase64List([o.encrypt]);
    } catch (err) {
      if (err instanceof InvalidKeyError) throw new ConfigError(`encrypt: ${err.message}`);
      throw err;
    }
  }
  const load = (relative: string, label: "LAN" | "WAN"): PoolKeyring => {
    const file = join(o.dataDir, relative);
    const persist = (keyring: Keyring) => {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileDurably(file, formatKeyringFile(keyring), 0o600);
    };
    let text = readText(file);
    const existed = text !== undefined;
    if (text === undefined && o.encrypt !== "") {
      const initial = Keyring.fromBase64List([o.encrypt]);
      persist(initial);
      text = formatKeyringFile(initial);
    }
    if (text === undefined) return { file, persist };
    let keyring: Keyring;
    try {
      keyring = parseKeyringFile(text);
    } catch (err) {
      throw new Error(`failed to load the gossip keyring file ${file}: ${(err as Error).message}`);
    }
    if (existed && o.encrypt !== "" && !keyring.has(o.encrypt)) {
      o.logger.warn(`${label} keyring doesn't include key provided with -encrypt, using keyring`, { keyring: label, file });
    }
    return { keyring, file, persist };
  };
  return { lan: load(SERF_LAN_KEYRING, "LAN"), ...(o.wan ? { wan: load(SERF_WAN_KEYRING, "WAN") } : {}) };
}

function readText(path: string): string | undefined {
  const bytes = readFileIfExists(path);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}
