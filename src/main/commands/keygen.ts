/**
 * `causeway keygen`: prints a new gossip encryption key for the `encrypt` option, like `consul keygen`
 * (https://developer.hashicorp.com/consul/commands/keygen): 32 bytes from the runtime's CSPRNG as
 * standard padded base64, on exactly one line, and nothing else on stdout.
 */
import type { Command } from "../command.ts";
import { parseCommandLine } from "../flags.ts";
import { cryptoRng } from "../../platform/index.ts";

/** Key length in bytes: AES-256, what Consul's `encrypt` expects. */
const KEY_BYTES = 32;

/** Something that yields random bytes; production uses the CSPRNG-backed `cryptoRng()`. */
export interface KeygenRandom {
  bytes(length: number): Uint8Array;
}

/**
 * Builds the command around a factory for its random source (called once per run), so tests can
 * inject a seeded one. Exit codes: 0 on success and for -h; 1 on extra arguments, an unknown flag,
 * or a random source that returns the wrong number of bytes.
 */
export function createKeygenCommand(random: () => KeygenRandom = cryptoRng): Command {
  return {
    name: "keygen",
    synopsis: "Generates a new gossip encryption key",
    async run(argv, io) {
      const parsed = parseCommandLine([], argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const key = random().bytes(KEY_BYTES);
      if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
        io.err(`error: the random source returned ${key?.length} bytes; want ${KEY_BYTES}\n`);
        return 1;
      }
      io.out(`${toBase64(key)}\n`);
      key.fill(0);
      return 0;
    },
  };
}

/** `causeway keygen`, drawing from the runtime's CSPRNG. */
export const keygenCommand: Command = createKeygenCommand();

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

const HELP = `Usage: causeway keygen

  Generates a new encryption key for gossip traffic: ${KEY_BYTES} random bytes from the system's
  cryptographically secure generator, printed as base64 on one line (the format of Consul's
  "encrypt" setting).
`;
