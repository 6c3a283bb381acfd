/**
 * Every API area, in registration and seed order (parents before children).
 * Each area lives in its own folder and exports one ServiceModule from its index.ts.
 */
import type { ServiceModule } from '../context.ts';
import { armModule } from './arm/index.ts';
import { computeModule } from './compute/index.ts';
import { authorizationModule } from './authorization/index.ts';
import { billingModule } from './billing/index.ts';
import { datashareModule } from './datashare/index.ts';
import { automationModule } from './automation/index.ts';
import { resourcesModule } from './resources/index.ts';
import { analyticsModule } from './analytics/index.ts';
import { platformModule } from './platform/index.ts';
import { wopiModule } from './wopi/index.ts';
import { mailModule } from './mail/index.ts';
import { mailsyncModule } from './mailsync/index.ts';
import { directoryModule } from './directory/index.ts';
import { consoleModule } from './console/index.ts';

/** The modules `buildApp` registers, in this order. */
export const modules: ServiceModule[] = [
  armModule,
  computeModule,
  authorizationModule,
  billingModule,
  datashareModule,
  automationModule,
  resourcesModule,
  analyticsModule,
  platformModule,
  wopiModule,
  mailModule,
  mailsyncModule,
  directoryModule,
  consoleModule,
];
