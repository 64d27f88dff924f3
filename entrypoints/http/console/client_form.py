"""The admin console's client form (docs/reference/console.md), one list of fields for register and
edit: ``FIELDS`` names each client field of docs/reference/oauth-and-oidc.md the form offers, as the
JSON API names it (``POST`` / ``PATCH /oauth/clients``), with its kind of input. The template
(``admin/client_form.html``) draws every field from this list, ``read`` turns a posted form into
the use case's keyword arguments, ``values`` a stored client into the form's values. Adding a
client field to the console is one ``FormField`` here (and its name in the use case).

Kinds: ``text`` (one value; empty: not sent), ``words`` (space-separated: a list), ``lines``
(one a line: a list), ``check`` (a checkbox: a bool), ``checks`` (one checkbox per choice, named
``<field>__<choice>``: the list of those ticked), ``choice`` (a ``<select>``; its empty option
is the server's default: not sent), ``json`` (a JSON object typed in a text area, e.g. a JWK
Set; empty: not sent; not JSON: a ``ValidationFailed`` naming the field).

``PRESETS`` are starting values of the register form (no script: a link reloads it):
``app`` (a web app on the code flow: ``authorization_code`` + ``refresh_token``, a secret),
``spa`` (a public single-page or mobile app: no secret), ``machine`` (``client_credentials``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from domain.clients import GRANT_TYPES, TOKEN_ENDPOINT_AUTH_METHODS, Client
from domain.errors import FieldError, ValidationFailed

__all__ = [
    "DEFAULT_PRESET",
    "FIELDS",
    "N_",
    "PRESETS",
    "SIGNING_ALGORITHMS",
    "FormField",
    "errors_by_field",
    "posted",
    "read",
    "shown",
    "values",
]

SIGNING_ALGORITHMS = "auth.algorithms"
"""``FormField.choices`` of the algorithm fields: the deployment's ``auth.algorithms``."""


def N_(text: str) -> str:
    """Marks ``text`` for the message catalog (Babel's ``N_`` keyword); the template
    translates it when it shows it."""
    return text


@attrs.frozen
class FormField:
    """One input of the client form: ``name`` (the API's field and the input's name),
    ``label``, ``kind`` (module docstring), ``choices`` (``checks`` and ``choice``; or
    ``SIGNING_ALGORITHMS``), ``hint`` (shown under the input), ``on_create`` / ``on_edit``
    (which form shows it), ``first_party`` (only for callers that may set the first-party
    fields, ``domain.policy.may_set_first_party_fields``), ``any_org`` (only for a caller who
    acts across organizations: a superadmin)."""

    name: str
    label: str
    kind: str = attrs.field(
        default="text", validator=attrs.validators.in_(
            ("text", "words", "lines", "check", "checks", "choice", "json")),
    )  # fmt: skip
    choices: tuple[str, ...] | str = ()
    hint: str = ""
    on_create: bool = True
    on_edit: bool = True
    first_party: bool = False
    any_org: bool = False


FIELDS: tuple[FormField, ...] = (
    FormField("name", N_("Name")),
    FormField("grant_types", N_("Grant types"), "checks", GRANT_TYPES,
              N_("authorization_code: apps that sign users in; refresh_token: they stay signed "
                 "in; client_credentials: a machine acting for itself.")),
    FormField("redirect_uris", N_("Redirect URIs (one a line)"), "lines",
              hint=N_("Exact URIs the code flow may return to: https, http on 127.0.0.1, or "
                      "an app's own scheme.")),
    FormField("post_logout_redirect_uris", N_("Post-logout redirect URIs (one a line)"),
              "lines", hint=N_("Where the app may send users after signing out.")),
    FormField("scopes", N_("Scopes (separated by spaces)"), "words",
              hint=N_("API scopes; openid, profile, email and offline_access need no "
                      "listing.")),
    FormField("audience", N_("Audiences (separated by spaces; empty: the default)"), "words"),
    FormField("public", N_("Public client (no secret: a mobile or single-page app)"), "check",
              on_edit=False),
    FormField("token_endpoint_auth_method", N_("Token endpoint authentication"), "choice",
              TOKEN_ENDPOINT_AUTH_METHODS,
              N_("none only for a public client; the default: client_secret_basic, or none "
                 "for a public client.")),
    FormField("require_dpop", N_("Require DPoP-bound tokens (RFC 9449)"), "check"),
    FormField("id_token_signed_response_alg", N_("ID token signing algorithm"), "choice",
              SIGNING_ALGORITHMS),
    FormField("access_token_signed_response_alg", N_("Access token signing algorithm"),
              "choice", SIGNING_ALGORITHMS),
    FormField("require_pushed_authorization_requests",
              N_("Require pushed authorization requests (PAR, RFC 9126)"), "check"),
    FormField("jwks", N_("JWK Set (private_key_jwt, RFC 7523)"), "json",
              hint=N_("The app's public keys as a JSON JWK Set: {\"keys\": [...]}; or give "
                      "a JWK Set URI below, not both.")),
    FormField("jwks_uri", N_("JWK Set URI (private_key_jwt, RFC 7523)"),
              hint=N_("Where the app's public keys are served (https).")),
    FormField("backchannel_logout_uri", N_("Back-channel logout URI"),
              hint=N_("Where logout tokens are posted when a user's session ends (https, or "
                      "http on a loopback host).")),
    FormField("backchannel_logout_session_required",
              N_("The app needs the session id (sid) in logout tokens"), "check"),
    FormField("logo_uri", N_("Logo URI (shown on the consent page)")),
    FormField("policy_uri", N_("Privacy policy URI")),
    FormField("tos_uri", N_("Terms of service URI")),
    FormField("skip_consent",
              N_("First-party: skip the consent page for users of its organization"), "check",
              first_party=True),
    FormField("all_organizations", N_("Sign in users of every organization"), "check",
              first_party=True),
    FormField("org_id", N_("Organization (empty: yours)"), on_edit=False, any_org=True),
)  # fmt: skip
"""The client form's fields, in the order shown."""

PRESETS: Mapping[str, Mapping[str, Any]] = {
    "app": {"grant_types": ("authorization_code", "refresh_token"), "public": False},
    "spa": {"grant_types": ("authorization_code", "refresh_token"), "public": True},
    "machine": {"grant_types": ("client_credentials",), "public": False},
}
"""The register form's starting values by ``?preset=`` (default ``app``)."""
DEFAULT_PRESET = "app"
_LISTS = ("words", "lines", "checks")
_OPTIONAL_LIST = frozenset({"audience"})  # empty: the server's default


def shown(fields: tuple[FormField, ...], *, create: bool, first_party: bool,
          any_org: bool) -> tuple[FormField, ...]:  # fmt: skip
    """The fields a form shows: register (``create``) or edit, for a caller who may set the
    first-party fields (``first_party``) and act in any organization (``any_org``)."""
    return tuple(
        f for f in fields
        if (f.on_create if create else f.on_edit)
        and (first_party or not f.first_party) and (any_org or not f.any_org)
    )  # fmt: skip


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _json_object(name: str, text: str) -> dict[str, Any] | None:
    """The JSON object typed in a ``json`` field; None when empty. Raises ``ValidationFailed``
    naming ``name`` for anything else."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValidationFailed([FieldError(name, "must be a JSON object")])
    return value


def read(form: Mapping[str, str], fields: tuple[FormField, ...], *, create: bool) -> dict[str, Any]:
    """The use case's keyword arguments from a posted ``form`` over the ``fields`` it showed.
    Register: an empty text, choice or list is left out (the server's default). Edit: every
    list and checkbox is sent (an emptied list clears it); an empty text or choice is left out
    (unchanged)."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.kind == "check":
            out[f.name] = form.get(f.name) == "on"
            continue
        if f.kind == "checks":
            value: Any = [c for c in f.choices if form.get(f"{f.name}__{c}") == "on"]
        elif f.kind == "words":
            value = form.get(f.name, "").split()
        elif f.kind == "lines":
            value = _lines(form.get(f.name, ""))
        elif f.kind == "json":
            value = _json_object(f.name, form.get(f.name, ""))
        else:
            value = form.get(f.name, "").strip() or None
        if f.kind in _LISTS and not value and (create or f.name in _OPTIONAL_LIST):
            value = None
        if value is not None or f.name == "scopes":
            out[f.name] = [] if value is None else value
    if create:
        out.setdefault("name", "")  # required: the use case names it (422)
    return out


def values(client: Client) -> dict[str, Any]:
    """The edit form's values of ``client`` (each field's stored value)."""
    return {f.name: getattr(client, f.name, None) for f in FIELDS}


def posted(form: Mapping[str, str], fields: tuple[FormField, ...]) -> dict[str, Any]:
    """The form's values as posted, to draw it again with its errors (nothing lost)."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.kind == "check":
            out[f.name] = form.get(f.name) == "on"
        elif f.kind == "checks":
            out[f.name] = tuple(c for c in f.choices if form.get(f"{f.name}__{c}") == "on")
        else:  # text, words and lines as typed
            out[f.name] = form.get(f.name, "")
    return out


def errors_by_field(errors: list[Any], fields: tuple[FormField, ...]) -> dict[str, str]:
    """``{field: message}`` of a ``ValidationFailed``'s errors; an error of a field the form
    does not show (``body``...) is kept under ``""`` (shown above the form)."""
    names = {f.name for f in fields}
    out: dict[str, str] = {}
    for error in errors:
        key = error.field if error.field in names else ""
        out[key] = f"{out[key]}; {error.message}" if key in out else error.message
    return out
