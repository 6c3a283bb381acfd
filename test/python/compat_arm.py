"""Compatibility suite, resource manager, Python (run by test/compat-arm.test.ts).

Debian's python3-azure clients (azure-mgmt-compute, -authorization, -billing, -datashare,
-automation) with azure-identity's ClientSecretCredential, configured as a user would: the
endpoint (base_url), CA trust (REQUESTS_CA_BUNDLE) and the credential with Stratus as its
authority. Each client sends its own api-version, its cloud's provider namespace and asks
for its cloud's default scope; the server maps them (STRATUS_AUDIENCE_ALIASES,
STRATUS_PROVIDER_NAMESPACE_ALIASES). Prints one JSON line: operation -> what it returned.
Any failed check raises, so the exit status is non-zero.
"""
import inspect
import json
import os
from urllib.parse import urlparse

import msal

from azure.identity import ClientSecretCredential, UsernamePasswordCredential
from azure.identity._internal.msal_credentials import MsalCredential
from azure.mgmt.automation import AutomationClient
from azure.mgmt.authorization import AuthorizationManagementClient
from azure.mgmt.authorization.v2020_10_01.models import RoleManagementPolicy, RoleManagementPolicyExpirationRule, RoleManagementPolicyRuleTarget
from azure.mgmt.billing import BillingManagementClient
from azure.mgmt.compute import ComputeManagementClient
from azure.mgmt.datashare import DataShareManagementClient
from azure.mgmt.datashare.models import Account, Identity, Share

env = os.environ
url = env["STRATUS_URL"]
tenant = env["STRATUS_TENANT"]
sub = env["STRATUS_SUBSCRIPTION"]
rg = env["STRATUS_RESOURCE_GROUP"]

# Instance discovery is off: the keyword is `disable_instance_discovery=True` in azure-identity
# 1.13 GA and later, `instance_discovery=False` in the 1.13.0b2 Debian 12 ships.
if "disable_instance_discovery" in inspect.signature(MsalCredential.__init__).parameters:
    no_discovery = {"disable_instance_discovery": True}
else:
    no_discovery = {"instance_discovery": False}


def credential(client_id, secret):
    return ClientSecretCredential(tenant, client_id, secret, authority=url, **no_discovery)


sp = credential(env["STRATUS_SP_ID"], env["STRATUS_SP_SECRET"])
mi = credential(env["STRATUS_MI_ID"], env["STRATUS_MI_SECRET"])
results = {}

# Compute SKUs: every page, then a location filter.
compute = ComputeManagementClient(sp, sub, base_url=url)
pages = [list(p) for p in compute.resource_skus.list().by_page()]
count = sum(len(p) for p in pages)
assert len(pages) > 1, len(pages)
assert count == int(env["STRATUS_SKU_COUNT"]), count
results["compute.resource_skus.list"] = {"pages": len(pages), "records": count}
west = list(compute.resource_skus.list(filter="location eq 'westus2'"))
assert west and all("westus2" in [l.lower() for l in s.locations] for s in west)
assert len(west) < count
results["compute.resource_skus.list(filter)"] = {"records": len(west)}

# Role management policies at a resource group.
authz = AuthorizationManagementClient(sp, sub, base_url=url)
scope = f"/subscriptions/{sub}/resourceGroups/{rg}"
policies = list(authz.role_management_policies.list_for_scope(scope))
assert len(policies) == 5, len(policies)
assert all("/providers/Vendor.Authorization/" in p.id for p in policies)
got = authz.role_management_policies.get(scope, policies[0].name)
assert got.name == policies[0].name
results["authorization.role_management_policies.list_for_scope"] = {"policies": len(policies)}
# Updating a policy takes the Owner role: the tenant administrator's credential (password grant).
# The one line of code this needs: msal-python (1.21, Debian 12) looks the user's realm up at
# https://<hostname>/common/userrealm/… with the port dropped (msal/authority.py, canonicalize()
# returns urlparse(...).hostname), so with Stratus on any port but 443 that request goes to
# another port. Marking the host as one without user-realm discovery skips that lookup (MSAL
# then does the plain password grant). Not needed when Stratus listens on 443.
if urlparse(url).port not in (None, 443):
    msal.authority.Authority._domains_without_user_realm_discovery.add(urlparse(url).hostname)
admin = UsernamePasswordCredential(env["STRATUS_PUBLIC_CLIENT_ID"], env["STRATUS_ADMIN_USER"], env["STRATUS_ADMIN_PASSWORD"], tenant_id=tenant, authority=url, **no_discovery)
admin_authz = AuthorizationManagementClient(admin, sub, base_url=url)
rule = RoleManagementPolicyExpirationRule(id="Expiration_Admin_Assignment", is_expiration_required=False, maximum_duration="P30D",
                                          target=RoleManagementPolicyRuleTarget(caller="Admin", operations=["All"], level="Assignment"))
updated = admin_authz.role_management_policies.update(scope, policies[1].name, RoleManagementPolicy(rules=[rule]))
assert [r.maximum_duration for r in updated.rules if r.id == "Expiration_Admin_Assignment"] == ["P30D"]
results["authorization.role_management_policies.update"] = {"name": updated.name}

# Billing transactions of an invoice (api-version 2020-05-01), every page.
billing = BillingManagementClient(mi, sub, base_url=url)
tx_pages = [list(p) for p in billing.transactions.list_by_invoice("70000001", "G000000001").by_page()]
txs = [t for p in tx_pages for t in p]
assert len(tx_pages) > 1 and len(txs) >= 256, (len(tx_pages), len(txs))
assert len({t.name for t in txs}) == len(txs)
assert all(t.kind in ("all", "reservation") for t in txs)
assert all(t.transaction_amount.currency == "USD" for t in txs)
results["billing.transactions.list_by_invoice"] = {"pages": len(tx_pages), "records": len(txs)}

# Data share (api-version 2020-09-01): the demo share's runs (POST, then the next links);
# an account and a share created and deleted (long-running operations).
datashare = DataShareManagementClient(sp, sub, base_url=url)
runs = list(datashare.shares.list_synchronizations(rg, "stratus-share", "sales"))
assert len(runs) == int(env["STRATUS_SYNC_COUNT"]), len(runs)
assert len({r.synchronization_id for r in runs}) == len(runs)
results["datashare.shares.list_synchronizations"] = {"records": len(runs)}
account = datashare.accounts.begin_create(rg, "py-compat", Account(location="eastus", identity=Identity(type="SystemAssigned"))).result()
assert account.name == "py-compat"
share = datashare.shares.create(rg, "py-compat", "py-share", Share(share_kind="CopyBased", description="from Python"))
assert share.name == "py-share"
deleted_share = datashare.shares.begin_delete(rg, "py-compat", "py-share").result()
assert deleted_share.status == "Succeeded", deleted_share
deleted = datashare.accounts.begin_delete(rg, "py-compat").result()
assert deleted.status == "Succeeded", deleted
assert [a.name for a in datashare.accounts.list_by_resource_group(rg) if a.name == "py-compat"] == []
results["datashare.accounts.begin_delete"] = {"status": deleted.status, "share": deleted_share.status}

# Automation webhook (api-version 2015-10-31).
automation = AutomationClient(sp, sub, base_url=url)
hook = automation.webhook.get(rg, "stratus-automation", "nightly-hook")
assert hook.name == "nightly-hook" and hook.runbook.name == "nightly-report" and hook.is_enabled
results["automation.webhook.get"] = {"name": hook.name, "runbook": hook.runbook.name}

print(json.dumps(results))
