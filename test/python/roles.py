"""Role definitions and role assignments through Python azure-mgmt-authorization (2022-04-01).

Run by test/role-assignments-python.test.ts. The official client configured as a user would:
the endpoint (base_url), CA trust (REQUESTS_CA_BUNDLE) and azure-identity credentials with
Stratus as the authority; the server maps the client's cloud audience and provider namespace
(STRATUS_AUDIENCE_ALIASES, STRATUS_PROVIDER_NAMESPACE_ALIASES). Prints one JSON line:
operation -> what it returned. Any failed check raises, so the exit status is non-zero.
"""
import inspect
import json
import os
import uuid
from urllib.parse import urlparse

import msal

from azure.core.exceptions import HttpResponseError
from azure.identity import ClientSecretCredential, UsernamePasswordCredential
from azure.identity._internal.msal_credentials import MsalCredential
from azure.mgmt.authorization import AuthorizationManagementClient
from azure.mgmt.authorization.v2022_04_01.models import Permission, RoleAssignmentCreateParameters, RoleDefinition

env = os.environ
url = env["STRATUS_URL"]
tenant = env["STRATUS_TENANT"]
sub = env["STRATUS_SUBSCRIPTION"]
rg = env["STRATUS_RESOURCE_GROUP"]
user_id = env["STRATUS_USER_ID"]
sub_scope = f"/subscriptions/{sub}"
rg_scope = f"{sub_scope}/resourceGroups/{rg}"
reader = "acdd72a7-3385-48ef-bd42-f606fba81ae7"
role_id = lambda guid: f"{sub_scope}/providers/Microsoft.Authorization/roleDefinitions/{guid}"

if "disable_instance_discovery" in inspect.signature(MsalCredential.__init__).parameters:
    no_discovery = {"disable_instance_discovery": True}
else:
    no_discovery = {"instance_discovery": False}


# msal-python (Debian 12) looks the user's realm up on the host with the port dropped (see
# test/python/compat_arm.py): marking the host as one without user-realm discovery skips it.
if urlparse(url).port not in (None, 443):
    msal.authority.Authority._domains_without_user_realm_discovery.add(urlparse(url).hostname)


def user_credential(name, password):
    return UsernamePasswordCredential(env["STRATUS_PUBLIC_CLIENT_ID"], name, password, tenant_id=tenant, authority=url, **no_discovery)


admin = AuthorizationManagementClient(user_credential(env["STRATUS_ADMIN_USER"], env["STRATUS_ADMIN_PASSWORD"]), sub, base_url=url)
user = AuthorizationManagementClient(user_credential(env["STRATUS_USER"], env["STRATUS_USER_PASSWORD"]), sub, base_url=url)
results = {}


def refused(fn, code):
    try:
        fn()
    except HttpResponseError as e:
        assert e.status_code == 403 and e.error.code == code, (e.status_code, e.error and e.error.code)
        return True
    raise AssertionError("expected a refusal")


# Role definitions: the built-ins, a filter, get and get_by_id.
defs = list(admin.role_definitions.list(sub_scope))
names = {d.role_name: d for d in defs}
assert names["Owner"].name == "8e3af657-a8ff-443c-a75c-2fe8c4bcb635" and names["Owner"].role_type == "BuiltInRole"
assert names["Reader"].permissions[0].actions == ["*/read"]
only = list(admin.role_definitions.list(sub_scope, filter="roleName eq 'Contributor'"))
assert [d.name for d in only] == ["b24988ac-6180-42a0-ab88-20f7382dd24c"], only
assert admin.role_definitions.get(sub_scope, reader).role_name == "Reader"
assert admin.role_definitions.get_by_id(f"/providers/Microsoft.Authorization/roleDefinitions/{reader}").role_name == "Reader"
results["role_definitions.list"] = len(defs)

# A custom role: created, listed by type, deleted.
custom_id = str(uuid.uuid4())
custom = admin.role_definitions.create_or_update(rg_scope, custom_id, RoleDefinition(role_name=f"Py {custom_id[:8]}", description="python", role_type="CustomRole", permissions=[Permission(actions=["Vendor.Compute/skus/read"])], assignable_scopes=[rg_scope]))
assert custom.name == custom_id and custom.role_type == "CustomRole"
assert [d.name for d in admin.role_definitions.list(rg_scope, filter="type eq 'CustomRole'")] == [custom_id]
assert admin.role_definitions.delete(rg_scope, custom_id).name == custom_id
results["role_definitions.create_or_update/delete"] = custom_id

# The user cannot list assignments; an assignment made by the admin changes that on its next call.
refused(lambda: list(user.role_assignments.list_for_subscription()), "AuthorizationFailed")
name = str(uuid.uuid4())
made = admin.role_assignments.create(sub_scope, name, RoleAssignmentCreateParameters(role_definition_id=role_id(reader), principal_id=user_id, principal_type="User"))
assert made.name == name and made.scope == sub_scope and made.principal_id == user_id
assert any(a.name == name for a in user.role_assignments.list_for_subscription())
results["role_assignments.create"] = made.id
# A non-owner may not assign roles.
refused(lambda: user.role_assignments.create(rg_scope, str(uuid.uuid4()), RoleAssignmentCreateParameters(role_definition_id=role_id(reader), principal_id=user_id)), "AuthorizationFailed")

# Get, get_by_id, the filters and the lists at each scope.
assert admin.role_assignments.get(sub_scope, name).id == made.id
assert admin.role_assignments.get_by_id(made.id).name == name
at_rg = str(uuid.uuid4())
admin.role_assignments.create(rg_scope, at_rg, RoleAssignmentCreateParameters(role_definition_id=role_id(reader), principal_id=user_id))
in_rg = {a.name for a in admin.role_assignments.list_for_resource_group(rg)}
assert {name, at_rg} <= in_rg, in_rg
at_scope = {a.name for a in admin.role_assignments.list_for_subscription(filter="atScope()")}
assert name in at_scope and at_rg not in at_scope
mine = {a.name for a in admin.role_assignments.list_for_scope(sub_scope, filter=f"principalId eq '{user_id}'")}
assert mine == {name, at_rg}, mine
assigned = {a.name for a in admin.role_assignments.list_for_scope(rg_scope, filter=f"assignedTo('{user_id}')")}
assert assigned == {name, at_rg}, assigned
res = {a.name for a in admin.role_assignments.list_for_resource(rg, "Microsoft.Storage", "storageAccounts", "stratusdata")}
assert {name, at_rg} <= res
results["role_assignments.list_*"] = sorted(mine)

# Delete and delete_by_id; the user loses access on its next call.
assert admin.role_assignments.delete_by_id(made.id).name == name
assert admin.role_assignments.delete(rg_scope, at_rg).name == at_rg
assert admin.role_assignments.delete(rg_scope, at_rg) is None
refused(lambda: list(user.role_assignments.list_for_subscription()), "AuthorizationFailed")
results["role_assignments.delete"] = "refused again"

print(json.dumps(results))
