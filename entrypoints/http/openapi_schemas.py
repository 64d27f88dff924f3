"""The component schemas of the OpenAPI 3.1 document (``entrypoints.http.openapi``): the bodies
the routes read and answer, as ``#/components/schemas/<name>``."""

from __future__ import annotations

from typing import Any

from application.shared.settings import ALGORITHMS
from domain.audit import AUDIT_EVENT_TYPES
from domain.invitations import InvitationStatus
from domain.model import Role
from entrypoints.http.requests import INT64_MAX, INT64_MIN

_PROBLEM = {
    "type": "object",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string"},
        "mfa_token": {
            "type": "string",
            "description": "with code mfa_required: the token for /login/mfa (contract 10)",
        },
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}

_CLIENT: dict[str, Any] = {
    "type": "object",
    "required": ["client_id", "name", "org_id", "scopes", "audience", "require_dpop", "disabled",
                 "created_at", "secret_rotated_at"],
    "properties": {
        "client_id": {"type": "string"},
        "name": {"type": "string"},
        "org_id": {"type": "string"},
        "scopes": {"type": "array", "items": {"type": "string"}},
        "audience": {"type": "array", "items": {"type": "string"}},
        "require_dpop": {"type": "boolean"},
        "access_token_signed_response_alg": {"type": "string", "enum": list(ALGORITHMS)},
        "disabled": {"type": "boolean"},
        "created_at": {"type": "string", "format": "date-time"},
        "secret_rotated_at": {"type": ["string", "null"], "format": "date-time"},
        "grant_types": {"type": "array", "items": {"type": "string"}},
        "redirect_uris": {"type": "array", "items": {"type": "string"}},
        "post_logout_redirect_uris": {"type": "array", "items": {"type": "string"}},
        "public": {"type": "boolean"},
        "token_endpoint_auth_method": {"type": "string"},
        "skip_consent": {"type": "boolean",
                         "description": "no consent page for users of the client's organization "
                                        "(set by a superadmin or the command line only)"},
        "all_organizations": {"type": "boolean",
                              "description": "signs in users of every organization, not only of "
                                             "its own (set by a superadmin or the command line "
                                             "only)"},
        "logo_uri": {"type": ["string", "null"]},
        "policy_uri": {"type": ["string", "null"]},
        "tos_uri": {"type": ["string", "null"]},
        "id_token_signed_response_alg": {"type": "string", "enum": list(ALGORITHMS)},
        "require_pushed_authorization_requests": {
            "type": "boolean",
            "description": "authorization requests only through /oauth/par (RFC 9126)"},
        "jwks": {"type": "object", "description": "public keys of private_key_jwt (RFC 7523)"},
        "jwks_uri": {"type": "string", "description": "where its JWK Set is served (https)"},
        "backchannel_logout_uri": {"type": ["string", "null"],
                                   "description": "where logout tokens are POSTed (OpenID "
                                                  "Connect Back-Channel Logout 1.0)"},
        "backchannel_logout_session_required": {"type": "boolean"},
    },
}  # fmt: skip

NO_NUL = "^[^\\u0000]*$"
"""The pattern of every request string the document does not constrain otherwise: no U+0000
(which no storage backend can hold; the request converter refuses it,
docs/reference/operations.md)."""

_JSON_VALUE: dict[str, Any] = {
    "description": "any JSON value within the service's input limits (an unknown member of a "
                   "body is ignored; its numbers lie within the signed 64-bit range)",
    "anyOf": [
        {"type": ["null", "boolean", "string"]},
        {"type": "number", "minimum": INT64_MIN, "maximum": INT64_MAX},
        {"type": "array", "items": {"$ref": "#/components/schemas/JsonValue"}},
        {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/JsonValue"}},
    ],
}  # fmt: skip

SCHEMAS: dict[str, Any] = {
    "Problem": _PROBLEM,
    "JsonValue": _JSON_VALUE,
    "TotpEnrolment": {
        "type": "object",
        "required": ["secret", "otpauth_uri", "qr_svg"],
        "properties": {
            "secret": {"type": "string", "description": "base32 (RFC 4648)"},
            "otpauth_uri": {"type": "string", "description": "otpauth://totp/... (the QR's text)"},
            "qr_svg": {"type": "string", "description": "the QR code, an SVG document"},
        },
    },
    "RecoveryCodes": {
        "type": "object",
        "required": ["recovery_codes"],
        "properties": {
            "recovery_codes": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 10,
                "maxItems": 10,
            }
        },
    },
    "User": {
        "type": "object",
        "required": ["id", "email", "role", "org_id", "created_at", "disabled",
                     "email_verified", "mfa_enabled", "passkeys"],
        "properties": {
            "id": {"type": "string"},
            "email": {"type": "string", "format": "email"},
            "role": {"enum": [r.value for r in Role]},
            "org_id": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
            "disabled": {"type": "boolean"},
            "email_verified": {"type": "boolean"},
            "mfa_enabled": {"type": "boolean"},
            "passkeys": {"type": "integer", "minimum": 0, "description": "how many"},
            "groups": {"type": "array", "items": {"type": "string"}},
        },
    },
    "Session": {
        "type": "object",
        "required": ["id", "created_at", "last_used_at", "expires_at", "user_agent",
                     "client_address", "client_id", "client_name"],
        "properties": {
            "id": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
            "last_used_at": {"type": "string", "format": "date-time"},
            "expires_at": {"type": "string", "format": "date-time",
                           "description": "the session's absolute end"},
            "user_agent": {"type": ["string", "null"], "maxLength": 256},
            "client_address": {"type": ["string", "null"]},
            "client_id": {"type": ["string", "null"],
                          "description": "the OpenID Connect client that started it; null for"
                                         " a JSON-API session"},
            "client_name": {"type": ["string", "null"],
                            "description": "that client's name; null for a JSON-API session"},
        },
    },
    "SessionList": {
        "type": "object",
        "required": ["items"],
        "properties": {"items": {"type": "array",
                                 "items": {"$ref": "#/components/schemas/Session"}}},
    },
    "Consent": {
        "type": "object",
        "required": ["client_id", "client_name", "scopes", "granted_at"],
        "properties": {
            "client_id": {"type": "string"},
            "client_name": {"type": ["string", "null"],
                            "description": "null only for a client deleted meanwhile"},
            "scopes": {"type": "array", "items": {"type": "string"},
                       "description": "every scope granted to the client, in grant order"},
            "granted_at": {"type": "string", "format": "date-time",
                           "description": "the latest grant"},
        },
    },
    "ConsentList": {
        "type": "object",
        "required": ["items"],
        "properties": {"items": {"type": "array",
                                 "items": {"$ref": "#/components/schemas/Consent"}}},
    },
    "TokenPair": {
        "type": "object",
        "required": ["access_token", "refresh_token", "token_type", "expires_in",
                     "refresh_expires_in"],
        "properties": {
            "access_token": {"type": "string"},
            "refresh_token": {"type": "string"},
            "token_type": {"const": "Bearer"},
            "expires_in": {"type": "integer", "description": "seconds"},
            "refresh_expires_in": {"type": "integer", "description": "seconds"},
        },
    },
    "Group": {
        "type": "object",
        "required": ["id", "name", "org_id", "member_count", "created_at"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "org_id": {"type": "string"},
            "member_count": {"type": "integer"},
            "created_at": {"type": "string", "format": "date-time"},
            "members": {
                "type": "array",
                "items": {"type": "object", "properties": {"id": {"type": "string"},
                                                           "email": {"type": "string"}}},
            },
        },
    },
    "UserPage": {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/User"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "Passkey": {
        "type": "object",
        "required": ["id", "name", "created_at", "last_used_at", "aaguid", "backed_up",
                     "transports", "suspected_clone"],
        "properties": {
            "id": {"type": "string"}, "name": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
            "last_used_at": {"type": ["string", "null"], "format": "date-time"},
            "aaguid": {"type": "string"}, "backed_up": {"type": "boolean"},
            "transports": {"type": "array", "items": {"type": "string"}},
            "suspected_clone": {"type": "boolean"},
        },
    },
    "PasskeyList": {"type": "object", "required": ["items"],
                    "properties": {"items": {"type": "array",
                                             "items": {"$ref": "#/components/schemas/Passkey"}}}},
    "PasskeyCeremony": {"type": "object", "required": ["ceremony_id", "options"],
                        "properties": {"ceremony_id": {"type": "string"},
                                       "options": {"type": "object"}}},
    "Identity": {
        "type": "object",
        "required": ["provider", "subject", "email", "linked_at", "last_used_at"],
        "properties": {
            "provider": {"type": "string"}, "subject": {"type": "string"},
            "email": {"type": ["string", "null"]},
            "linked_at": {"type": "string", "format": "date-time"},
            "last_used_at": {"type": ["string", "null"], "format": "date-time"},
        },
    },
    "IdentityList": {"type": "object", "required": ["items"],
                     "properties": {"items": {"type": "array",
                                              "items": {"$ref": "#/components/schemas/Identity"}}}},
    "Client": _CLIENT,
    "NewClient": {**_CLIENT, "required": [*_CLIENT["required"], "client_secret"],
                  "properties": {**_CLIENT["properties"],
                                 "client_secret": {"type": "string",
                                                   "description": "shown once"}}},
    "ClientPage": {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Client"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "ClientSecret": {"type": "object", "required": ["client_secret"],
                     "properties": {"client_secret": {"type": "string"}}},
    "AuditEvent": {
        "type": "object",
        "required": ["id", "type", "occurred_at", "actor_id", "user_id", "org_id",
                     "client_address", "user_agent", "details"],
        "properties": {
            "id": {"type": "string"},
            "type": {"enum": list(AUDIT_EVENT_TYPES)},
            "occurred_at": {"type": "string", "format": "date-time"},
            "actor_id": {"type": ["string", "null"]},
            "user_id": {"type": ["string", "null"]},
            "org_id": {"type": ["string", "null"]},
            "client_address": {"type": ["string", "null"]},
            "user_agent": {"type": ["string", "null"]},
            "details": {"type": "object",
                        "description": "ids and reasons; never a password, token, hash or secret"},
        },
    },
    "AuditEventPage": {
        "type": "object",
        "properties": {"items": {"type": "array",
                                 "items": {"$ref": "#/components/schemas/AuditEvent"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "Invitation": {
        "type": "object",
        "required": ["id", "org_id", "email", "role", "group_ids", "invited_by", "created_at",
                     "expires_at", "status"],
        "properties": {
            "id": {"type": "string"},
            "org_id": {"type": "string"},
            "email": {"type": "string"},
            "role": {"enum": [r.value for r in Role]},
            "group_ids": {"type": "array", "items": {"type": "string"}},
            "invited_by": {"type": "string"},
            "created_at": {"type": "string", "format": "date-time"},
            "expires_at": {"type": "string", "format": "date-time"},
            "status": {"enum": [s.value for s in InvitationStatus]},
        },
    },
    "InvitationPage": {
        "type": "object",
        "properties": {"items": {"type": "array",
                                 "items": {"$ref": "#/components/schemas/Invitation"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "Webhook": {
        "type": "object",
        "required": ["id", "org_id", "url", "event_types", "description", "enabled",
                     "disabled_reason", "failing_since", "created_at", "updated_at"],
        "properties": {
            "id": {"type": "string"},
            "org_id": {"type": "string"},
            "url": {"type": "string", "format": "uri"},
            "event_types": {"type": "array", "items": {"type": "string"}},
            "description": {"type": "string"},
            "enabled": {"type": "boolean"},
            "disabled_reason": {"type": ["string", "null"],
                                "description": "failing: disabled after failing deliveries"},
            "failing_since": {"type": ["string", "null"], "format": "date-time"},
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"type": "string", "format": "date-time"},
        },
    },
    "WebhookWithSecret": {
        "allOf": [{"$ref": "#/components/schemas/Webhook"},
                  {"type": "object", "required": ["secret"],
                   "properties": {"secret": {"type": "string", "pattern": "^whsec_",
                                             "description": "shown once"}}}],
    },
    "WebhookPage": {
        "type": "object",
        "properties": {"items": {"type": "array",
                                 "items": {"$ref": "#/components/schemas/Webhook"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "WebhookDelivery": {
        "type": "object",
        "required": ["id", "message_id", "event_type", "attempt", "attempted_at",
                     "status_code", "error", "delivered"],
        "properties": {
            "id": {"type": "string"},
            "message_id": {"type": "string", "description": "the webhook-id header"},
            "event_type": {"type": "string"},
            "attempt": {"type": "integer", "minimum": 1},
            "attempted_at": {"type": "string", "format": "date-time"},
            "status_code": {"type": ["integer", "null"]},
            "error": {"type": ["string", "null"]},
            "delivered": {"type": "boolean"},
        },
    },
    "WebhookDeliveryPage": {
        "type": "object",
        "properties": {"items": {"type": "array",
                                 "items": {"$ref": "#/components/schemas/WebhookDelivery"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "WebhookTest": {
        "type": "object", "required": ["message_id"],
        "properties": {"message_id": {"type": "string"}},
    },
    "GroupPage": {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Group"}},
                       "next_cursor": {"type": ["string", "null"]}},
    },
    "Health": {
        "type": "object",
        "required": ["status"],
        "properties": {
            "status": {"enum": ["UP", "DOWN"]},
            "components": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "required": ["status"],
                    "properties": {"status": {"enum": ["UP", "DOWN"]},
                                   "details": {"type": "object"}},
                },
            },
        },
    },
    "Info": {
        "type": "object",
        "properties": {
            "app": {"type": "object", "properties": {"name": {"type": "string"},
                                                     "version": {"type": "string"}}},
            "git": {"type": "object"},
            "python": {"type": "object"},
        },
    },
    "RefreshResult": {
        "type": "object",
        "required": ["changed", "restart_required"],
        "properties": {
            "changed": {"type": "array", "items": {"type": "string"}},
            "restart_required": {"type": "array", "items": {"type": "string"}},
        },
    },
    # SCIM 2.0 (docs/reference/scim.md): the resources are described by RFC 7643 and by
    # GET /scim/v2/Schemas; here only their envelope.
    "ScimResource": {
        "type": "object",
        "required": ["schemas"],
        "properties": {
            "schemas": {"type": "array", "items": {"type": "string"}},
            "id": {"type": "string"},
        },
        "description": "a SCIM resource or message (RFC 7643: User, Group, PatchOp...)",
    },
    "ScimListResponse": {
        "type": "object",
        "required": ["schemas", "totalResults"],
        "properties": {
            "schemas": {"type": "array", "items": {"type": "string"}},
            "totalResults": {"type": "integer"},
            "startIndex": {"type": "integer"},
            "itemsPerPage": {"type": "integer"},
            "Resources": {"type": "array", "items": {"type": "object"}},
        },
    },
    "ScimError": {
        "type": "object",
        "required": ["schemas", "status"],
        "properties": {
            "schemas": {"type": "array",
                        "items": {"const": "urn:ietf:params:scim:api:messages:2.0:Error"}},
            "status": {"type": "string"},
            "scimType": {"type": "string"},
            "detail": {"type": "string"},
        },
    },
}  # fmt: skip
