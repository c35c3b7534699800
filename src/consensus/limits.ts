/**
 * Size limits that must agree between the transport and the driver: an entry the leader appends has to
 * fit in one transport message, or it is never replicated and every later entry waits behind it.
 */

/** Largest frame payload (one Raft message) the TCP transport accepts unless told otherwise: 16 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

/**
 * Largest Raft entry (proposal envelope + command) a node proposes, forwards or appends unless told
 * otherwise: one frame less 1 MiB. A MsgApp carries entries up to maxSizePerMsg (1 MiB by default) or
 * one larger entry alone (src/raft limitSize), so its payload is at most max(1 MiB, this) plus a few
 * bytes of framing per entry, which the 1 MiB of headroom covers.
 */
export const DEFAULT_MAX_ENTRY_BYTES = DEFAULT_MAX_FRAME_BYTES - 1024 * 1024;
