export { createHttpApi } from "./app.ts";
export { agentSelfBody } from "./agent.ts";
export type { AgentInfo, HttpApiDeps, RaftStatus } from "./deps.ts";
