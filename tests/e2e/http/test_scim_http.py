"""SCIM 2.0 provisioning over HTTP (docs/reference/scim.md, RFC 7644), on SQLite and PostgreSQL:
Entra ID- and Okta-shaped request sequences leave the expected users and groups (checked over
the JSON API), a client of one organization sees and changes nothing of another (404), a token
without the ``scim`` scope is refused, errors are SCIM ``Error`` messages, every change has
its audit row naming the SCIM client; ``externalId`` and the kept attributes round trip and
filter, a new ``userName`` is a new unverified email (never a superadmin's).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, bearer
from tests.e2e.http.test_oauth_http import ROOT, Machines, machines

SCIM = "application/scim+json"
PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


class Scim:
    """A SCIM client of one organization, holding a token with the ``scim`` scope."""

    def __init__(self, m: Machines, token: str) -> None:
        self.m, self.token = m, token

    async def call(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        headers = {**bearer(self.token), "Content-Type": SCIM}
        data = None if body is None else json.dumps(body)
        resp = await self.m.http.request(method, "/scim/v2" + path, data=data, headers=headers)
        assert resp.status == status, (method, path, await resp.text())
        if status == 204:
            return None
        assert resp.headers["Content-Type"].startswith(SCIM)
        return await resp.json()

    async def error(self, method: str, path: str, status: int, body: Any = None) -> Any:
        answer = await self.call(method, path, body, status)
        assert answer["schemas"] == [ERROR_SCHEMA] and answer["status"] == str(status), answer
        return answer


async def scim_client(m: Machines, org_id: str = "default") -> Scim:
    """A client registered by the superadmin in ``org_id`` with the ``scim`` scope."""
    client = await m.register(m.root, scopes=["scim"], org_id=org_id)
    return Scim(m, (await m.granted(client))["access_token"])


def patch(*operations: dict[str, Any]) -> dict[str, Any]:
    return {"schemas": [PATCH_OP], "Operations": list(operations)}


async def json_users(m: Machines) -> dict[str, dict[str, Any]]:
    """The home organization's users over the JSON API, by email."""
    page = await (await m.http.get("/users?limit=200", headers=bearer(m.admin))).json()
    return {u["email"]: u for u in page["items"]}


async def json_group(m: Machines, group_id: str) -> dict[str, Any]:
    return await (await m.http.get(f"/groups/{group_id}", headers=bearer(m.admin))).json()  # type: ignore[no-any-return]


async def test_an_entra_id_sequence_provisions_users_and_groups(make_client: MakeClient) -> None:
    m = await machines(make_client)
    scim = await scim_client(m)
    # Entra ID looks the user up by userName first, then creates it.
    found = await scim.call("GET", '/Users?filter=userName eq "Jo@Example.com"')
    assert found["totalResults"] == 0
    sent = {
        "schemas": [USER_SCHEMA], "externalId": "e-1", "userName": "Jo@Example.com",
        "active": True, "displayName": "Jo", "name": {"givenName": "Jo", "familyName": "Doe"},
        "emails": [{"primary": True, "type": "work", "value": "Jo@Example.com"}],
    }  # fmt: skip
    jo = await scim.call("POST", "/Users", sent, 201)
    assert jo["userName"] == "jo@example.com" and jo["active"] is True and jo["id"]
    await scim.error("POST", "/Users", 409, sent)  # the same userName again: uniqueness
    ann = await scim.call("POST", "/Users", {**sent, "userName": "ann@example.com"}, 201)
    found = await scim.call("GET", '/Users?filter=userName eq "jo@example.com"')
    assert [r["id"] for r in found["Resources"]] == [jo["id"]]
    # A group with one member, then Entra's add and remove-by-value member patches.
    group = await scim.call("POST", "/Groups", {"schemas": [GROUP_SCHEMA], "displayName": "Eng",
                                                "members": [{"value": jo["id"]}]}, 201)  # fmt: skip
    gid = group["id"]
    await scim.call("PATCH", f"/Groups/{gid}", patch(
        {"op": "Add", "path": "members", "value": [{"value": ann["id"]}]}))  # fmt: skip
    assert {u["id"] for u in (await json_group(m, gid))["members"]} == {jo["id"], ann["id"]}
    await scim.call("PATCH", f"/Groups/{gid}", patch(
        {"op": "Remove", "path": "members", "value": [{"value": jo["id"]}]}))  # fmt: skip
    await scim.call("PATCH", f"/Groups/{gid}", patch(
        {"op": "Replace", "path": "displayName", "value": "Engineering"}))  # fmt: skip
    stored = await json_group(m, gid)
    assert stored["name"] == "Engineering"
    assert [u["id"] for u in stored["members"]] == [ann["id"]]
    # Entra deactivates with the string "False", then deletes.
    await scim.call("PATCH", f"/Users/{jo['id']}", patch(
        {"op": "Replace", "path": "active", "value": "False"}))  # fmt: skip
    assert (await json_users(m))["jo@example.com"]["disabled"] is True
    got = await scim.call("GET", f"/Users/{jo['id']}")
    assert got["active"] is False
    await scim.call("DELETE", f"/Users/{jo['id']}", status=204)
    await scim.error("GET", f"/Users/{jo['id']}", 404)
    assert "jo@example.com" not in await json_users(m)
    # Every change is audited with the SCIM client as actor.
    events = await (await m.http.get("/audit-events?limit=200", headers=bearer(m.admin))).json()
    mine = [e for e in events["items"] if str(e["actor_id"]).startswith("scim:")]
    kinds = {e["type"] for e in mine}
    assert {"user.registered", "group.created", "group.member_added", "group.member_removed",
            "group.updated", "user.disabled", "user.deleted"} <= kinds  # fmt: skip
    registered = [e for e in mine if e["type"] == "user.registered"]
    assert all(e["details"] == {"via": "scim"} for e in registered)


async def test_an_okta_sequence_provisions_users_and_groups(make_client: MakeClient) -> None:
    m = await machines(make_client)
    scim = await scim_client(m)
    sent = {"schemas": [USER_SCHEMA], "userName": "kim@example.com", "active": True,
            "name": {"givenName": "Kim", "familyName": "Lee"},
            "emails": [{"primary": True, "value": "kim@example.com", "type": "work"}]}  # fmt: skip
    kim = await scim.call("POST", "/Users", sent, 201)
    lee = await scim.call("POST", "/Users", {**sent, "userName": "lee@example.com", "emails": [
        {"primary": True, "value": "lee@example.com", "type": "work"}]}, 201)  # fmt: skip
    found = await scim.call("GET", '/Users?filter=userName sw "k" or emails.value co "lee"'
                                   "&startIndex=1&count=1")  # fmt: skip
    assert (found["totalResults"], found["itemsPerPage"], found["startIndex"]) == (2, 1, 1)
    group = await scim.call("POST", "/Groups", {"schemas": [GROUP_SCHEMA], "displayName": "Ops",
                                                "members": []}, 201)  # fmt: skip
    gid = group["id"]
    # Okta: replace without a path, members replaced by PATCH, a PUT of the whole group.
    await scim.call("PATCH", f"/Groups/{gid}", patch(
        {"op": "replace", "value": {"id": gid, "displayName": "Ops team"}}))  # fmt: skip
    await scim.call("PATCH", f"/Groups/{gid}", patch(
        {"op": "add", "path": "members", "value": [{"value": kim["id"]}, {"value": lee["id"]}]}))  # fmt: skip
    await scim.call("PATCH", f"/Groups/{gid}", patch(
        {"op": "remove", "path": f'members[value eq "{kim["id"]}"]'}))  # fmt: skip
    listed = await scim.call("GET", '/Groups?filter=displayName eq "Ops team"')
    assert [g["id"] for g in listed["Resources"]] == [gid]
    assert [x["value"] for x in listed["Resources"][0]["members"]] == [lee["id"]]
    await scim.call("PUT", f"/Groups/{gid}", {"schemas": [GROUP_SCHEMA], "displayName": "Ops",
                                              "members": [{"value": kim["id"]}]})  # fmt: skip
    stored = await json_group(m, gid)
    assert stored["name"] == "Ops" and [u["id"] for u in stored["members"]] == [kim["id"]]
    # Okta deactivates with a PUT (active false) or a replace without path.
    await scim.call("PUT", f"/Users/{kim['id']}", {**sent, "active": False})
    await scim.call("PATCH", f"/Users/{lee['id']}", patch(
        {"op": "replace", "value": {"active": False}}))  # fmt: skip
    users = await json_users(m)
    assert users["kim@example.com"]["disabled"] and users["lee@example.com"]["disabled"]
    # userName is the email: another user's is 409, and nothing changes.
    answer = await scim.error("PUT", f"/Users/{kim['id']}", 409,
                              {**sent, "userName": "lee@example.com", "active": True})  # fmt: skip
    assert answer["scimType"] == "uniqueness"
    assert (await json_users(m))["kim@example.com"]["disabled"] is True
    await scim.call("DELETE", f"/Groups/{gid}", status=204)
    await scim.error("GET", f"/Groups/{gid}", 404)


async def test_a_client_of_one_organization_sees_and_changes_nothing_of_another(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    home, other = await scim_client(m), await scim_client(m, "globex")
    user = await home.call("POST", "/Users", {"schemas": [USER_SCHEMA],
                                              "userName": "a@example.com"}, 201)  # fmt: skip
    group = await home.call("POST", "/Groups", {"schemas": [GROUP_SCHEMA], "displayName": "G"},
                            201)  # fmt: skip
    assert (await other.call("GET", "/Users"))["totalResults"] == 0
    assert (await other.call("GET", "/Groups"))["totalResults"] == 0
    for method, path, body in (
        ("GET", f"/Users/{user['id']}", None),
        ("PATCH", f"/Users/{user['id']}", patch({"op": "replace", "path": "active", "value": False})),
        ("DELETE", f"/Users/{user['id']}", None),
        ("GET", f"/Groups/{group['id']}", None),
        ("PATCH", f"/Groups/{group['id']}", patch({"op": "replace", "path": "displayName",
                                                   "value": "X"})),
        ("DELETE", f"/Groups/{group['id']}", None),
    ):  # fmt: skip
        await other.error(method, path, 404, body)
    # Nor may it put another organization's user in its own group.
    mine = await other.call("POST", "/Groups", {"schemas": [GROUP_SCHEMA], "displayName": "G"},
                            201)  # fmt: skip
    await other.error("PATCH", f"/Groups/{mine['id']}", 400,
                      patch({"op": "add", "path": "members", "value": [{"value": user["id"]}]}))  # fmt: skip
    assert (await home.call("GET", f"/Users/{user['id']}"))["active"] is True
    assert (await home.call("GET", f"/Groups/{group['id']}"))["displayName"] == "G"


async def test_only_a_client_token_with_the_scim_scope_is_accepted(make_client: MakeClient) -> None:
    m = await machines(make_client, {"AUTHSVC_OAUTH__SHARED_SCOPES": "read,scim"})
    without = await m.register(m.admin, scopes=["read"])
    token = (await m.granted(without))["access_token"]
    answer = await Scim(m, token).error("GET", "/Users", 403)
    assert answer["schemas"] == [ERROR_SCHEMA]
    await Scim(m, m.admin).error("GET", "/Users", 401)  # a user's token
    await Scim(m, "not-a-token").error("GET", "/Users", 401)
    # An org_admin grants scim when the operator lists it in oauth.shared_scopes (ADR 0050).
    client = await m.register(m.admin, scopes=["scim"])
    scim = Scim(m, (await m.granted(client))["access_token"])
    assert (await scim.call("GET", "/Users"))["totalResults"] >= 1
    # Taking the scope away (or disabling the client) cuts its live tokens at once.
    resp = await m.http.patch(f"/oauth/clients/{client['client_id']}", json={"scopes": ["read"]},
                              headers=bearer(m.admin))  # fmt: skip
    assert resp.status == 200, await resp.text()
    await scim.error("GET", "/Users", 403)
    # A SCIM client never touches a superadmin (an org_admin's rule): 403, nothing changes.
    full = await scim_client(m)
    found = await full.call("GET", f'/Users?filter=userName eq "{ROOT}"')
    root = found["Resources"][0]["id"]
    off = patch({"op": "replace", "path": "active", "value": False})
    await full.error("PATCH", f"/Users/{root}", 403, off)
    await full.error("DELETE", f"/Users/{root}", 403)
    assert (await full.call("GET", f"/Users/{root}"))["active"] is True


async def test_discovery_documents_and_errors(make_client: MakeClient) -> None:
    m = await machines(make_client)
    scim = await scim_client(m)
    config = await scim.call("GET", "/ServiceProviderConfig")
    assert config["patch"]["supported"] is True and config["bulk"]["supported"] is False
    assert config["filter"] == {"supported": True, "maxResults": 200}
    types = await scim.call("GET", "/ResourceTypes")
    assert {t["id"] for t in types["Resources"]} == {"User", "Group"}
    schemas = await scim.call("GET", "/Schemas")
    assert {s["id"] for s in schemas["Resources"]} == {USER_SCHEMA, GROUP_SCHEMA}
    await scim.error("GET", "/Schemas/urn:nothing", 404)
    bad = await scim.error("GET", "/Users?filter=userName eq", 400)
    assert bad["scimType"] == "invalidFilter"
    await scim.error("POST", "/Users", 400, {"schemas": [USER_SCHEMA], "userName": "not an email"})
    resp = await m.http.post("/scim/v2/Users", data=b"{", headers={**bearer(scim.token),
                                                                  "Content-Type": SCIM})  # fmt: skip
    assert resp.status == 400 and (await resp.json())["schemas"] == [ERROR_SCHEMA]
    assert await json_users(m)  # the home organization is there, nothing added
    assert "not an email" not in await json_users(m)


async def test_external_ids_attributes_and_a_new_user_name(make_client: MakeClient) -> None:
    m = await machines(make_client)
    scim = await scim_client(m)
    enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    sent = {
        "schemas": [USER_SCHEMA, enterprise], "externalId": "entra-42", "userName": "uma@example.com",
        "active": True, "displayName": "Uma", "name": {"givenName": "Uma", "familyName": "Roe"},
        "title": "Engineer", "phoneNumbers": [{"value": "+1 555 0100", "type": "work"}],
        "emails": [{"primary": True, "type": "work", "value": "uma@corp.example"}],
        enterprise: {"department": "R&D", "employeeNumber": "7"},
    }  # fmt: skip
    uma = await scim.call("POST", "/Users", sent, 201)  # the extension and the rest are read
    assert (uma["externalId"], uma["displayName"], uma["name"]) == (
        "entra-42", "Uma", {"givenName": "Uma", "familyName": "Roe"})  # fmt: skip
    assert uma["emails"] == [{"primary": True, "type": "work", "value": "uma@corp.example"}]
    assert "title" not in uma and enterprise not in uma  # read and ignored
    found = await scim.call("GET", '/Users?filter=externalId eq "entra-42"')
    assert [r["id"] for r in found["Resources"]] == [uma["id"]]
    found = await scim.call("GET", '/Users?filter=displayName sw "Um"')
    assert [r["id"] for r in found["Resources"]] == [uma["id"]]
    # Entra's PATCH forms on the kept attributes and on ignored ones, in one request.
    await scim.call("PATCH", f"/Users/{uma['id']}", patch(
        {"op": "Replace", "path": "displayName", "value": "Uma R."},
        {"op": "Replace", "path": 'emails[type eq "work"].value', "value": "u@corp.example"},
        {"op": "Add", "path": f"{enterprise}:department", "value": "Ops"},
        {"op": "Replace", "path": "externalId", "value": "entra-43"}))  # fmt: skip
    got = await scim.call("GET", f"/Users/{uma['id']}")
    assert (got["displayName"], got["externalId"], got["emails"][0]["value"]) == (
        "Uma R.", "entra-43", "u@corp.example")  # fmt: skip
    # A new userName is a new email for the account, unverified; audited with the client.
    renamed = await scim.call("PATCH", f"/Users/{uma['id']}", patch(
        {"op": "replace", "path": "userName", "value": "Uma.Roe@Example.com"}))  # fmt: skip
    assert renamed["userName"] == "uma.roe@example.com"
    users = await json_users(m)
    assert "uma@example.com" not in users
    assert users["uma.roe@example.com"]["email_verified"] is False
    events = await (await m.http.get("/audit-events?type=email.changed",
                                     headers=bearer(m.admin))).json()  # fmt: skip
    changed = [e for e in events["items"] if e["user_id"] == uma["id"]]
    assert len(changed) == 1 and str(changed[0]["actor_id"]).startswith("scim:")
    assert changed[0]["details"] == {"via": "scim"}
    assert "uma" not in json.dumps(changed)  # no address in the audit row
    # Removing active (RFC 7644 §3.5.2.2) leaves the attribute unassigned: the account enabled.
    await scim.call("PATCH", f"/Users/{uma['id']}", patch(
        {"op": "replace", "path": "active", "value": False}))  # fmt: skip
    assert (await json_users(m))["uma.roe@example.com"]["disabled"] is True
    back = await scim.call(
        "PATCH", f"/Users/{uma['id']}", patch({"op": "remove", "path": "active"})
    )
    assert "active" not in back
    assert (await json_users(m))["uma.roe@example.com"]["disabled"] is False
    # A group keeps its externalId; members carry value, $ref and type (RFC 7643 §8.7.1).
    group = await scim.call("POST", "/Groups", {"schemas": [GROUP_SCHEMA], "displayName": "Eng",
                                                "externalId": "g-1",
                                                "members": [{"value": uma["id"]}]}, 201)  # fmt: skip
    assert group["externalId"] == "g-1"
    assert group["members"] == [{"value": uma["id"], "type": "User",
                                 "$ref": group["members"][0]["$ref"]}]  # fmt: skip
    found = await scim.call("GET", '/Groups?filter=externalId eq "g-1"')
    assert [g["id"] for g in found["Resources"]] == [group["id"]]


async def test_a_superadmins_user_name_never_changes(make_client: MakeClient) -> None:
    m = await machines(make_client)
    scim = await scim_client(m)
    found = await scim.call("GET", f'/Users?filter=userName eq "{ROOT}"')
    root = found["Resources"][0]["id"]
    for body in (
        patch({"op": "replace", "path": "userName", "value": "attacker@example.com"}),
        patch({"op": "replace", "path": "displayName", "value": "Root"}),
    ):
        await scim.error("PATCH", f"/Users/{root}", 403, body)
    await scim.error("PUT", f"/Users/{root}", 403,
                     {"schemas": [USER_SCHEMA], "userName": "attacker@example.com"})  # fmt: skip
    assert ROOT in await json_users(m)
    assert "attacker@example.com" not in await json_users(m)
