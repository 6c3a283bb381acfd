/**
 * What the kernel remembers of the resource-manager operations declared on an app (issue 27):
 * every operation's method, URL template and api-versions (the providers listing derives the
 * namespaces, resource types and api-versions Stratus serves from them), and the checks a PUT
 * under a subscription's provider namespace passes before its handler (the namespace's
 * registration: `MissingSubscriptionRegistration`), registered once by the area that owns them.
 */
import type { AppContext } from '../../context.ts';
import type { ArmCall } from './gateway.ts';

/** One declared operation. */
export interface DeclaredOperation {
  method: string;
  /** The route's URL template (`/subscriptions/:subscriptionId/…/providers/Vendor.X/…`). */
  url: string;
  /** Supported api-versions, newest first. */
  apiVersions: readonly string[];
}

/** A check of a PUT under `…/providers/<namespace>/…` of a subscription; throws to refuse it. */
export type NamespacePutCheck = (call: ArmCall, namespace: string) => Promise<void>;

const declared = new WeakMap<AppContext, DeclaredOperation[]>();
const putChecks = new WeakMap<AppContext, NamespacePutCheck>();

/** Records an operation declared on the app of `ctx` (called by `armRoute`). */
export function recordOperation(ctx: AppContext, op: DeclaredOperation): void {
  let list = declared.get(ctx);
  if (!list) declared.set(ctx, (list = []));
  list.push(op);
}

/** The operations declared on the app of `ctx`, in declaration order. */
export function declaredOperations(ctx: AppContext): readonly DeclaredOperation[] {
  return declared.get(ctx) ?? [];
}

/** Sets the check every namespaced PUT of the app of `ctx` passes (one per app; the resources area's registration check). */
export function onNamespacedPut(ctx: AppContext, check: NamespacePutCheck): void {
  putChecks.set(ctx, check);
}

const namespacedPut = /^\/subscriptions\/:subscriptionId\/(?:.*\/)?providers\/([A-Za-z][\w]*\.[A-Za-z][\w]*)\//u;

/**
 * The provider namespace a PUT route writes under (`Vendor.Automation` of
 * `/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Vendor.Automation/…`),
 * or undefined for another method or a route outside a subscription's namespaces.
 */
export function putNamespace(method: string, url: string): string | undefined {
  return method === 'PUT' ? namespacedPut.exec(url)?.[1] : undefined;
}

/** Runs the app's namespaced-PUT check for a call, when the route has a namespace and the call a subscription. */
export async function checkNamespacedPut(ctx: AppContext, namespace: string | undefined, call: ArmCall): Promise<void> {
  if (namespace === undefined || !call.subscription) return;
  await putChecks.get(ctx)?.(call, namespace);
}
