"""Credential-library compatibility, Python side (issue 10 item 5), run by
test/compat-identity-python.test.ts with Debian's python3-msal and python3-azure.

Configured as a user would: the authority (Stratus URL), the CA through REQUESTS_CA_BUNDLE,
a credential, the scope under the audience alias — and instance discovery turned off, because
both libraries send instance discovery to the vendor's global host whatever the authority is.
Prints one JSON object: the tokens and facts the Node test checks against the server.
"""
import json
import os
import sys

import msal
from urllib.parse import urlparse
from azure.identity import ClientSecretCredential, UsernamePasswordCredential

url = os.environ["STRATUS_URL"]
tenant = os.environ["STRATUS_TENANT"]
alias = os.environ["STRATUS_ARM_ALIAS"]
sp_id, sp_secret = os.environ["STRATUS_SP_ID"], os.environ["STRATUS_SP_SECRET"]
public_id = os.environ["STRATUS_PUBLIC_CLIENT_ID"]
username, password = os.environ["STRATUS_USERNAME"], os.environ["STRATUS_PASSWORD"]
authority = f"{url}/{tenant}"
out = {}

# msal 1.21 (Debian bookworm) sends user-realm discovery to https://<host>/common/userrealm/…
# without the authority's port (Authority.user_realm_discovery formats netloc=self.instance, the
# bare hostname). With Stratus on port 443 nothing is needed; on any other port this one line
# skips realm discovery for the host (the password grant itself goes to the right port).
if urlparse(url).port not in (None, 443):
    msal.authority.Authority._domains_without_user_realm_discovery.add(urlparse(url).hostname)


def need(result, what):
    if "access_token" not in result:
        sys.stderr.write(f"{what}: {json.dumps(result)}\n")
        sys.exit(1)
    return result


# msal: client credentials.
cca = msal.ConfidentialClientApplication(sp_id, client_credential=sp_secret, authority=authority, instance_discovery=False)
out["msal_client_credentials"] = need(cca.acquire_token_for_client(scopes=[f"{alias}.default"]), "msal client credentials")["access_token"]

# msal: username/password (user-realm discovery first), then silent from the cache, then forced refresh.
pca = msal.PublicClientApplication(public_id, authority=authority, instance_discovery=False)
first = need(pca.acquire_token_by_username_password(username, password, scopes=[f"{alias}user_impersonation"]), "msal username/password")
out["msal_password"] = first["access_token"]
out["msal_id_token_claims"] = first.get("id_token_claims")
accounts = pca.get_accounts()
out["msal_accounts"] = [{"username": a["username"], "home_account_id": a["home_account_id"]} for a in accounts]
silent = need(pca.acquire_token_silent([f"{alias}user_impersonation"], account=accounts[0]), "msal silent")
out["msal_silent"] = silent["access_token"]
refreshed = need(pca.acquire_token_silent_with_error([f"{alias}user_impersonation"], account=accounts[0], force_refresh=True) or {}, "msal refresh")
out["msal_refreshed"] = refreshed["access_token"]

# azure-identity.
cred = ClientSecretCredential(tenant, sp_id, sp_secret, authority=url, instance_discovery=False)
out["identity_client_secret"] = cred.get_token(f"{alias}.default").token
upc = UsernamePasswordCredential(public_id, username, password, tenant_id=tenant, authority=url, instance_discovery=False)
record = upc.authenticate(scopes=[f"{alias}user_impersonation"])
out["identity_record"] = {"username": record.username, "tenant_id": record.tenant_id, "home_account_id": record.home_account_id, "authority": record.authority}
out["identity_password"] = upc.get_token(f"{alias}user_impersonation").token

print(json.dumps(out))
