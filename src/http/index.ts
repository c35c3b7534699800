export { createHttpApi } from "./app.ts";
export { agentSelfBody } from "./agent.ts";
export type { AgentInfo, CatalogApi, HttpApiDeps, MemberStatus, MembershipApi, MemberView, RaftStatus } from "./deps.ts";
