/** Equality of local and catalog records (NodeService.IsSame, HealthCheck.IsSame): shared with federation states in src/model/same.ts. */
export { canonical, sameCheck, sameList, sameMap, sameService, sameStruct } from "../model/index.ts";
