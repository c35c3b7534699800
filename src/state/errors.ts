/** Consul's error strings the state store returns (agent/consul/state/state_store.go v1.8). */
/** ErrMissingNode. */
export const ERR_MISSING_NODE = "Missing node registration";
/** ErrMissingService. */
export const ERR_MISSING_SERVICE = "Missing service registration";
