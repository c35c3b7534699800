import pkg from "../../package.json" with { type: "json" };

/** Causeway's release version, from package.json. */
export const VERSION: string = pkg.version;

declare const CAUSEWAY_REVISION: string | undefined;

/**
 * The git revision the binary was built from, set by build.ts through `bun build --define`;
 * "" when running from source, where no build stamped one.
 */
export const REVISION: string = typeof CAUSEWAY_REVISION === "string" ? CAUSEWAY_REVISION : "";
