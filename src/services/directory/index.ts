/**
 * The directory area (issue 27 items 6–7): users, groups and members, applications with their
 * secrets and certificates, service principals and their application permissions, and the
 * organization — on the mail family's origin, audience, `/v1.0` path and error envelope. Its
 * tables are the core directory tables the identity provider reads (`src/core/tables.ts`,
 * migrations in `src/core/identity/directory-schema.ts`), so every write here is honoured by
 * the next token request.
 */
import type { ServiceModule } from '../../context.ts';
import { registerDirectoryRoutes } from './routes.ts';

/** The directory module (no tables of its own: the directory is the core's). */
export const directoryModule: ServiceModule = {
  name: 'directory',
  migrations: {},
  tables: [],
  register(app, ctx) {
    registerDirectoryRoutes(app, ctx);
  },
};
