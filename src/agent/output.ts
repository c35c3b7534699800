/**
 * Check output limits (Consul's checks.DefaultBufSize, 4 KiB). Sizes are UTF-8 bytes as in Go; a cut
 * never splits a character (the cut moves back to a character boundary).
 */

/** Consul's default cap on stored check output (checks.DefaultBufSize). */
export const CHECK_BUF_SIZE = 4 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 length of `s`. */
export function byteLength(s: string): number {
  return encoder.encode(s).length;
}

/**
 * Keeps the first `max` bytes and says so, as CheckTTL.SetStatus and the check update endpoint do:
 * "<head> ... (captured 4096 of 5000 bytes)". Shorter output is returned unchanged.
 */
export function truncateOutput(output: string, max: number = CHECK_BUF_SIZE): string {
  const bytes = encoder.encode(output);
  if (bytes.length <= max) return output;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${decoder.decode(bytes.subarray(0, end))} ... (captured ${max} of ${bytes.length} bytes)`;
}

/** Keeps the last `max` bytes, silently, like the circular buffer Consul reads an HTTP check's body into. */
export function keepTail(output: string, max: number = CHECK_BUF_SIZE): string {
  const bytes = encoder.encode(output);
  if (bytes.length <= max) return output;
  let start = bytes.length - max;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return decoder.decode(bytes.subarray(start));
}
