/**
 * The view of the host that go-sockaddr templates are evaluated over: what Go's net.Interfaces() and
 * go-sockaddr's route lookup would report. The platform layer reads the real one; tests build their own.
 */

/** Go's net.Flags names (net/interface.go), in the order Go prints them. */
export type InterfaceFlag = "up" | "broadcast" | "loopback" | "pointtopoint" | "multicast" | "running";

export const FLAG_ORDER: readonly InterfaceFlag[] = ["up", "broadcast", "loopback", "pointtopoint", "multicast", "running"];

/** One network interface and its addresses. */
export interface HostInterface {
  readonly name: string;
  /** The kernel's interface index; interfaces are listed in this order. */
  readonly index: number;
  readonly flags: readonly InterfaceFlag[];
  /** `ip/prefix` (or a bare IP for a host prefix), IPv4 before IPv6 as Go lists them. */
  readonly addresses: readonly string[];
  readonly mtu?: number;
  /** `aa:bb:cc:dd:ee:ff`, "" when none. */
  readonly mac?: string;
}

export interface SockaddrHost {
  /** Interfaces with at least one address, by index. */
  readonly interfaces: readonly HostInterface[];
  /**
   * The interface that holds the default route; undefined when the host has none (GetDefaultInterfaces
   * then fails and `sort "default"` decides nothing, as go-sockaddr's do).
   */
  readonly defaultInterface?: string;
}
