/**
 * The console area (issue 12 item 1): the browser console at `/_stratus/console` and the
 * request log's JSON at `/_stratus/requests`. No tables of its own; it reads the other areas
 * in-process.
 */
import type { ServiceModule } from '../../context.ts';
import { registerConsoleRoutes } from './routes.ts';

/** The console module (registered last: it reads every other area). */
export const consoleModule: ServiceModule = {
  name: 'console',
  migrations: {},
  tables: [],
  register(app, ctx) {
    registerConsoleRoutes(app, ctx);
  },
};
