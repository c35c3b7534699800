/**
 * Datacenter names as requests give them (`?dc=`, a registration's `Datacenter`). Consul's agents only
 * take names of lowercase letters, digits, '-' and '_' (agent/config builder.go), and compare names
 * exactly (a map lookup in its router), so "DC1" is another datacenter than "dc1" and, like any name no
 * server knows, is answered "No path to datacenter" by the RPC layer. What is refused here, with 400,
 * is a name that cannot be a datacenter at all: anything but a DNS label of letters, digits, '-' and
 * '_' of at most 63 characters.
 */

/** The longest datacenter name (a DNS label: it is one in `server.<dc>.consul`). */
export const MAX_DATACENTER_LENGTH = 63;

const NAME = /^[A-Za-z0-9_-]+$/;

/** Why `name` cannot be a datacenter name, or undefined when it can ("" is checked by the caller: it means "this one"). */
export function datacenterNameError(name: string, what = "datacenter"): string | undefined {
  if (name.length > MAX_DATACENTER_LENGTH) return `Invalid ${what} name: longer than ${MAX_DATACENTER_LENGTH} characters`;
  if (!NAME.test(name)) return `Invalid ${what} name ${JSON.stringify(name)}: only letters, digits, '-' and '_' are allowed`;
  return undefined;
}
