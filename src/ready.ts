/** The `stratus serve --json` line: what a parent process needs to use the server it started. */
import type { RunningServer } from './server.ts';
import type { ReadyInfo } from './api-types.ts';
import { packageVersion } from './version.ts';
import { demoAdmin, demoPublicClient, demoServicePrincipal, demoSubscription, demoTenant, demoUser, otherTenant } from './seed/demo.ts';

/**
 * The ready line of `server`; `machineCaFile` (an ephemeral store's machine CA, which outlives the
 * temporary folder) replaces the data folder's CA path when given.
 */
export function readyLine(server: RunningServer, machineCaFile?: string): ReadyInfo {
  const tenant = { id: demoTenant.id, domain: demoTenant.domain };
  return {
    stratus: 'ready',
    version: packageVersion(),
    origin: server.ctx.origin(),
    httpsUrl: server.httpsUrl,
    httpUrl: server.httpUrl,
    caFile: machineCaFile ?? server.tls?.caFile,
    controlKey: server.ctx.controlKey,
    dataDir: server.ctx.config.dataDir,
    ephemeral: machineCaFile !== undefined,
    pid: process.pid,
    world: server.ctx.config.world ?? [],
    identities: {
      tenant,
      tenants: [tenant, { id: otherTenant.id, domain: otherTenant.domain }],
      admin: { userPrincipalName: demoAdmin.userPrincipalName, password: demoAdmin.password, tenant: demoTenant.id },
      user: { userPrincipalName: demoUser.userPrincipalName, password: demoUser.password, tenant: demoTenant.id },
      app: { clientId: demoServicePrincipal.appId, clientSecret: demoServicePrincipal.secret, tenant: demoTenant.id },
      publicClientId: demoPublicClient.appId,
      subscription: { id: demoSubscription.id, resourceGroup: demoSubscription.resourceGroup },
    },
  };
}
