"""pytest: one Stratus per session, a clean store per test (stratus_clean).

Run: python3 -m pytest   (with stratus-cloud installed in the folder npx runs from, or STRATUS_BIN set)
"""


def rg_url(stratus):
    sub = stratus.identities["subscription"]["id"]
    return "%s/subscriptions/%s/resourcegroups/recipe-rg?api-version=2021-04-01" % (stratus.origin, sub)


def test_creates_a_resource_group(stratus_clean):
    token = stratus_clean.token("arm")
    status, body = stratus_clean.request("PUT", rg_url(stratus_clean), {"location": "eastus"}, {"authorization": "Bearer " + token})
    assert status == 201, body
    assert body["name"] == "recipe-rg"


def test_starts_from_a_clean_store(stratus_clean):
    token = stratus_clean.token("arm")
    status, _ = stratus_clean.request("GET", rg_url(stratus_clean), None, {"authorization": "Bearer " + token})
    assert status == 404
