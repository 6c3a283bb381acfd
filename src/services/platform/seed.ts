/**
 * The data platform part of the demo data set (issue 4 "Demo data names"): the workspace
 * `Stratus Demo` where the administrator is Admin, the service principal Contributor and
 * the user Viewer (the managed identity is Contributor too); its folder `Streams`; a second
 * workspace `Stratus Sandbox` where the user is Contributor; the sensitivity labels
 * `Confidential`, `General` and `Highly Confidential` (published only to the administrator,
 * so anyone else fails to apply it); and one workspace of the second tenant.
 * Every id is fixed so that tests and users can rely on it.
 */
import type { SeedContext } from '../../context.ts';
import { toJson } from '../../store/db.ts';
import { demoAdmin, demoManagedIdentity, demoServicePrincipal, demoTenant, demoUser, otherTenant, otherUser } from '../../seed/demo.ts';
import { seedRows } from './store.ts';

/** The demo workspace (same id and name as the analytics area's). */
export const platformDemoWorkspace = { id: '7d0c6f2e-3a1b-4c5d-8e9f-0a1b2c3d4e5f', displayName: 'Stratus Demo' } as const;
/** The folder `Streams` of the demo workspace. */
export const platformDemoFolder = { id: '2f8c4a6e-1b3d-4e5f-9a7b-6c8d0e2f4a61', displayName: 'Streams' } as const;
/** A second workspace where the demo user is Contributor and the administrator Admin. */
export const platformSandboxWorkspace = { id: '5e1a7c3b-9d2f-4a6e-8b0c-3d5f7a9b1c82', displayName: 'Stratus Sandbox' } as const;
/** A folder of the sandbox workspace (not a folder of the demo workspace). */
export const platformSandboxFolder = { id: '6a2b8d4c-0e3f-4b7a-9c1d-4e6a8b0c2d93', displayName: 'Drafts' } as const;
/** A workspace of the second tenant, where its user is Admin. */
export const platformOtherWorkspace = { id: '9b3c5d7e-2f4a-4c6b-8d0e-5f7a9b1c3d04', displayName: 'Other Workspace' } as const;
/** The demo sensitivity labels. */
export const platformLabels = {
  confidential: { id: '4e1c9a2b-7f3d-4b8e-9c6a-5d2f0e1b3a47', name: 'Confidential' },
  general: { id: '8a5d2c7f-3e1b-4f9a-b6c0-7d4e1f2a9b58', name: 'General' },
  /** Published only to the administrator: anyone else cannot apply it (an `ApplyOrFail` provisioning failure). */
  highlyConfidential: { id: 'c7e3f1a9-5b2d-4c8e-a0f6-9b1d3e5f7a26', name: 'Highly Confidential' },
} as const;

/** Loads the platform demo rows into empty tables. */
export async function seedPlatform(ctx: SeedContext): Promise<void> {
  const db = ctx.store.db;
  const t = demoTenant.id;
  await seedRows(db, 'platform_workspaces', [
    { tenant_id: t, id: platformDemoWorkspace.id, display_name: platformDemoWorkspace.displayName, description: 'The demo workspace.' },
    { tenant_id: t, id: platformSandboxWorkspace.id, display_name: platformSandboxWorkspace.displayName, description: 'A workspace where the demo user contributes.' },
    { tenant_id: otherTenant.id, id: platformOtherWorkspace.id, display_name: platformOtherWorkspace.displayName, description: '' },
  ]);
  const ra = (tenant: string, ws: string, principal: string, type: string, role: string) => ({ tenant_id: tenant, workspace_id: ws, principal_id: principal, principal_type: type, role });
  await seedRows(db, 'platform_role_assignments', [
    ra(t, platformDemoWorkspace.id, demoAdmin.id, 'User', 'Admin'),
    ra(t, platformDemoWorkspace.id, demoServicePrincipal.objectId, 'ServicePrincipal', 'Contributor'),
    ra(t, platformDemoWorkspace.id, demoManagedIdentity.objectId, 'ServicePrincipal', 'Contributor'),
    ra(t, platformDemoWorkspace.id, demoUser.id, 'User', 'Viewer'),
    ra(t, platformSandboxWorkspace.id, demoAdmin.id, 'User', 'Admin'),
    ra(t, platformSandboxWorkspace.id, demoUser.id, 'User', 'Contributor'),
    ra(otherTenant.id, platformOtherWorkspace.id, otherUser.id, 'User', 'Admin'),
  ]);
  await seedRows(db, 'platform_folders', [
    { tenant_id: t, id: platformDemoFolder.id, workspace_id: platformDemoWorkspace.id, display_name: platformDemoFolder.displayName, parent_folder_id: null },
    { tenant_id: t, id: platformSandboxFolder.id, workspace_id: platformSandboxWorkspace.id, display_name: platformSandboxFolder.displayName, parent_folder_id: null },
  ]);
  await seedRows(db, 'platform_sensitivity_labels', [
    { tenant_id: t, id: platformLabels.confidential.id, name: platformLabels.confidential.name, published_to: null },
    { tenant_id: t, id: platformLabels.general.id, name: platformLabels.general.name, published_to: null },
    { tenant_id: t, id: platformLabels.highlyConfidential.id, name: platformLabels.highlyConfidential.name, published_to: toJson([demoAdmin.id]) },
  ]);
}
