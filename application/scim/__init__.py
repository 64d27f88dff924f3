"""SCIM 2.0 provisioning (RFC 7643, RFC 7644; docs/reference/scim.md): who may provision
(``access``), the users (``users``) and groups (``groups``) an identity provider keeps in step.

Built on ``application.accounts`` (the lifecycle and group use cases, so every rule and audit
row of the JSON API applies unchanged); the SCIM wire format (schemas, filters, PATCH) stays in
``entrypoints.http.scim``.
"""
