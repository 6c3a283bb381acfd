"""The resource manager's base surface, Python (run by test/resources-sdk.test.ts).

Debian's python3-azure azure-mgmt-resource (ResourceManagementClient 2022-09-01,
SubscriptionClient 2021-01-01) with azure-identity's ClientSecretCredential, configured as a
user would: the endpoint (base_url), CA trust (REQUESTS_CA_BUNDLE) and the credential with
Stratus as its authority. The group delete is polled with no wait between polls (a polling
method whose delay is zero) while this script moves the Stratus clock. Prints one JSON line:
operation -> what it returned. Any failed check raises, so the exit status is non-zero.
"""
import inspect
import json
import os
import ssl
import urllib.request

from azure.identity import ClientSecretCredential
from azure.identity._internal.msal_credentials import MsalCredential
from azure.mgmt.core.polling.arm_polling import ARMPolling
from azure.mgmt.resource import ResourceManagementClient, SubscriptionClient

env = os.environ
url = env["STRATUS_URL"]
sub = env["STRATUS_SUBSCRIPTION"]
demo_rg = env["STRATUS_RESOURCE_GROUP"]

if "disable_instance_discovery" in inspect.signature(MsalCredential.__init__).parameters:
    no_discovery = {"disable_instance_discovery": True}
else:
    no_discovery = {"instance_discovery": False}

cred = ClientSecretCredential(env["STRATUS_TENANT"], env["STRATUS_SP_ID"], env["STRATUS_SP_SECRET"], authority=url, **no_discovery)
results = {}


def advance(seconds):
    """Moves the Stratus clock (the control plane)."""
    req = urllib.request.Request(
        f"{url}/_stratus/clock",
        data=json.dumps({"advanceSeconds": seconds}).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {env['STRATUS_CONTROL_KEY']}"},
        method="POST",
    )
    with urllib.request.urlopen(req, context=ssl.create_default_context(cafile=env["REQUESTS_CA_BUNDLE"])) as r:
        assert r.status == 200, r.status


class NoDelay(ARMPolling):
    """The resource manager's polling with no wait between polls (the test moves the clock instead)."""

    def _delay(self):
        pass


subs = SubscriptionClient(cred, base_url=url)
listed = [x.subscription_id for x in subs.subscriptions.list()]
assert listed == [sub], listed
results["subscriptions.list"] = listed
got = subs.subscriptions.get(sub)
assert got.state == "Enabled" and got.tenant_id == env["STRATUS_TENANT_ID"], got
results["subscriptions.get"] = got.display_name
locations = [l.name for l in subs.subscriptions.list_locations(sub)]
assert "eastus" in locations and "westeurope" in locations, locations
results["subscriptions.list_locations"] = len(locations)
tenants = [t.tenant_id for t in subs.tenants.list()]
assert tenants == [env["STRATUS_TENANT_ID"]], tenants
results["tenants.list"] = tenants

client = ResourceManagementClient(cred, sub, base_url=url)
assert client.resource_groups.check_existence(demo_rg) is True
assert client.resource_groups.check_existence("py-rg") is False
created = client.resource_groups.create_or_update("py-rg", {"location": "westeurope", "tags": {"lang": "python"}})
assert created.name == "py-rg" and created.properties.provisioning_state == "Succeeded", created
results["resource_groups.create_or_update"] = created.id
assert client.resource_groups.check_existence("py-rg") is True
results["resource_groups.check_existence"] = True
assert client.resource_groups.get("py-rg").tags == {"lang": "python"}
results["resource_groups.get"] = "py-rg"
names = [g.name for g in client.resource_groups.list(filter="tagName eq 'lang' and tagValue eq 'python'")]
assert names == ["py-rg"], names
results["resource_groups.list(filter)"] = names
updated = client.resource_groups.update("py-rg", {"tags": {"lang": "python", "v": "2"}})
assert updated.tags == {"lang": "python", "v": "2"} and updated.location == "westeurope", updated
results["resource_groups.update"] = updated.tags

poller = client.resource_groups.begin_delete("py-rg", polling=NoDelay())
advance(int(env["STRATUS_DELETE_SECONDS"]) + 1)
poller.result(timeout=60)
assert poller.done()
assert client.resource_groups.check_existence("py-rg") is False
results["resource_groups.begin_delete"] = poller.status()

providers = {p.namespace: p.registration_state for p in client.providers.list()}
assert providers.get("Vendor.Automation") == "Registered", providers
results["providers.list"] = len(providers)
automation = client.providers.get("Microsoft.Automation")
assert automation.namespace == "Vendor.Automation", automation.namespace
assert any(t.resource_type == "automationAccounts" for t in automation.resource_types)
results["providers.get"] = automation.namespace
registered = client.providers.register("Microsoft.Automation")
assert registered.registration_state == "Registered", registered.registration_state
results["providers.register"] = registered.registration_state

resources = list(client.resources.list(filter="resourceType eq 'Microsoft.Storage/storageAccounts'"))
assert [r.name for r in resources] == ["stratusdata"], resources
results["resources.list"] = [r.id for r in resources]

print(json.dumps(results))
