/**
 * Every page module of the UI. app.tsx mounts their routes and live topics; assets.ts appends their
 * CSS and client script. Routes of one module never shadow another's (each owns its URLs).
 */
import { aclPages } from "./acl_pages.tsx";
import { failoverPages } from "./failover_page.tsx";
import { federationPages } from "./federation_page.tsx";
import { instanceDetailPages } from "./instance_detail_page.tsx";
import { instancesPages } from "./instances_page.tsx";
import { intentionsPages } from "./intentions_page.tsx";
import { kvPages } from "./kv_page.tsx";
import { nodeDetailPages } from "./node_detail_page.tsx";
import { nodesPages } from "./nodes_page.tsx";
import type { UiPageModule } from "./page.ts";
import { routingPages } from "./routing_page.tsx";
import { servicesPages } from "./services_page.tsx";
import { settingsPages } from "./settings_page.tsx";

export const PAGES: readonly UiPageModule[] = [
  servicesPages,
  instancesPages,
  instanceDetailPages,
  routingPages,
  failoverPages,
  intentionsPages,
  nodesPages,
  nodeDetailPages,
  kvPages,
  aclPages,
  federationPages,
  settingsPages,
];
