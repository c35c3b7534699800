export { createHttpApi } from "./app.ts";
export { agentSelfBody } from "./agent.ts";
export type { AgentInfo, HttpApiDeps, MemberStatus, MembershipApi, MemberView, RaftStatus } from "./deps.ts";
