/**
 * `start(config)`: builds the app, listens on HTTPS and HTTP, prints the endpoints, the CA
 * path and the development identities, and shuts down cleanly on SIGINT/SIGTERM
 * (in-flight requests finish, the database is closed).
 */
import type { AddressInfo } from 'node:net';
import { buildApp, type BuiltApp } from './app.ts';
import type { Config } from './config.ts';
import { writeRuntimeInfo } from './runtime-info.ts';
import { demoAdmin, demoServicePrincipal, demoSubscription, demoTenant, demoUser } from './seed/demo.ts';

/** A running server and its addresses. */
export interface RunningServer extends BuiltApp {
  /** `https://host:port` (undefined when HTTPS is off). */
  httpsUrl?: string;
  /** `http://host:port`. */
  httpUrl: string;
  /** Stops listening, lets in-flight requests finish, closes the store. */
  close(): Promise<void>;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** Builds and starts listening. @throws Error when a port is taken or the store cannot open. */
export async function start(config: Config): Promise<RunningServer> {
  const built = await buildApp(config);
  const { app, httpServer, tls } = built;
  let httpsUrl: string | undefined;
  const host = hostForUrl(config.host);
  // The certificate names localhost, so the HTTPS origin says localhost for 127.0.0.1; the
  // listener lines (logged below) print the same URLs as the banner.
  const httpsHost = host === '127.0.0.1' ? 'localhost' : host;
  if (tls) {
    await app.listen({ port: config.httpsPort, host: config.host });
    const port = (app.server.address() as AddressInfo).port;
    httpsUrl = `https://${httpsHost}:${port}`;
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.httpPort, config.host, () => resolve());
    });
  } else {
    await app.listen({ port: config.httpPort, host: config.host });
  }
  const httpPort = (httpServer.address() as AddressInfo).port;
  const httpUrl = `http://${host}:${httpPort}`;
  if (httpsUrl) built.ctx.log.info(`Server listening at ${httpsUrl}`);
  built.ctx.log.info(`Server listening at ${httpUrl}`);
  built.setListeningOrigin(httpsUrl ?? httpUrl);
  writeRuntimeInfo(config.dataDir, { origin: built.ctx.origin(), httpsUrl, httpUrl, pid: process.pid, startedAt: new Date().toISOString() });
  return {
    ...built,
    httpsUrl,
    httpUrl,
    close: () => app.close(),
  };
}

/** The start-up banner: endpoints, CA file, identities. */
export function banner(s: RunningServer): string {
  const o = s.ctx.origin();
  const lines = [
    'Stratus is running.',
    `  HTTPS:       ${s.httpsUrl ?? '(off)'}`,
    `  HTTP:        ${s.httpUrl}`,
    `  public URL:  ${o}`,
    `  store:       ${s.ctx.store.dialect}${s.ctx.config.databaseUrl ? '' : ` (${s.ctx.config.dataDir}/stratus.db)`}`,
    ...(s.tls?.caFile ? [`  CA file:     ${s.tls.caFile}   (export NODE_EXTRA_CA_CERTS=${s.tls.caFile})`] : []),
    `  token URL:   ${o}/${demoTenant.id}/oauth2/v2.0/token`,
    `  control key: ${s.ctx.controlKey}   (Authorization: Bearer <key> on ${o}/_stratus/*)`,
    `  console:     ${o}/_stratus/console?key=${encodeURIComponent(s.ctx.controlKey)}`,
    '',
    'Development identities:',
    `  tenant            ${demoTenant.id} (${demoTenant.domain})`,
    `  administrator     ${demoAdmin.userPrincipalName} / ${demoAdmin.password}`,
    `  user (no roles)   ${demoUser.userPrincipalName} / ${demoUser.password}`,
    `  service principal ${demoServicePrincipal.appId} / ${demoServicePrincipal.secret}`,
    `  subscription      ${demoSubscription.id} (resource group ${demoSubscription.resourceGroup})`,
  ];
  return lines.join('\n');
}
