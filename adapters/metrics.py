"""Service metrics (docs/reference/operations.md), recorded by subscribing to application events.

Metric families (Prometheus names; counters are exposed with the ``_total`` suffix):

=============================================  =========================  =======================
name                                           labels                     from event
=============================================  =========================  =======================
``authsvc_logins_total``                       ``outcome`` = success |    ``LoginSucceeded``,
                                               invalid_credentials |      ``LoginFailed``
                                               rate_limited |
                                               account_disabled |
                                               email_not_verified |       ``MfaChallenged``
                                               mfa_required |             (mfa_required),
                                               mfa_failed                 ``MfaFailed``
``authsvc_token_refreshes_total``              ``outcome`` = success |    ``AccessTokenIssued``
                                               invalid | reuse            (grant refresh),
                                                                          ``RefreshFailed``,
                                                                          ``RefreshTokenReuse-
                                                                          Detected``
``authsvc_refresh_token_reuse_detections``     —                          ``RefreshTokenReuse-
``_total``                                                                Detected``
``authsvc_access_tokens_issued_total``         ``algorithm``, ``grant``   ``AccessTokenIssued``,
                                               (login | refresh |         ``ClientTokenIssued``
                                               client_credentials)
``authsvc_tokens_issued_total``                ``alg``, ``kind`` =        ``AccessTokenIssued``,
                                               access |                   ``ClientTokenIssued``
                                               client_credentials
``authsvc_tokens_verified_total``              ``alg``                    (``token_verified``,
                                                                          called by the signer)
``authsvc_oauth_client_auth_failures_total``   ``reason`` =               ``ClientAuthFailed``
                                               unknown_client |
                                               wrong_secret | disabled
``authsvc_dpop_proof_failures_total``          ``reason`` (DPOP_REASONS)  ``DpopProofRefused``
``authsvc_sessions_ended_total``               ``reason`` = logout |      ``SessionEnded``
                                               user | admin | reuse |
                                               password | disabled |
                                               password_reset |
                                               revoked | replaced
``authsvc_emails_sent_total``                  ``kind`` = verify | reset ``EmailSent``
                                               | invitation,
                                               ``outcome`` = sent |
                                               failed | skipped
``authsvc_audit_write_failures_total``         ``type`` (an audit type,   ``AuditWriteFailed``
                                               docs/reference/operations.md)
=============================================  =========================  =======================

HTTP request counts and latencies come from ``service_actuator.aiohttp.metrics_middleware``.
prometheus-client is optional: ``service_actuator.metrics`` hands out no-op metrics without it,
so this module never imports it (the design's rule: one module imports prometheus_client).
Label values come from fixed sets, never from user input, so cardinality stays bounded.
"""

from __future__ import annotations

from typing import Any

from application.events.catalog import (
    AccessTokenIssued,
    AuditWriteFailed,
    EmailSent,
    LoginFailed,
    LoginSucceeded,
    MfaChallenged,
    MfaFailed,
    RefreshFailed,
    RefreshTokenReuseDetected,
    SessionEnded,
)
from application.events.clients import ClientAuthFailed, ClientTokenIssued, DpopProofRefused
from application.ports import EventBus
from application.recovery.invitation_mail import INVITATION
from application.recovery.mail import KINDS
from application.shared.settings import ALGORITHMS
from domain.audit import AUDIT_EVENT_TYPES
from domain.model import SessionEndReason
from service_actuator.metrics import counter

LOGIN_OUTCOMES = (
    "success",
    "invalid_credentials",
    "rate_limited",
    "account_disabled",
    "email_not_verified",
    "mfa_required",
    "mfa_failed",
)
EMAIL_OUTCOMES = ("sent", "failed", "skipped")
REFRESH_OUTCOMES = ("success", "invalid", "reuse")
GRANTS = ("login", "refresh", "client_credentials")
TOKEN_KINDS = ("access", "client_credentials")
EMAIL_KINDS = (*KINDS, INVITATION)
"""The ``kind`` label of ``authsvc_emails_sent_total``: verification, reset, invitation."""
"""The ``kind`` label of ``authsvc_tokens_issued_total`` (docs/reference/tokens-and-sessions.md;
``id`` joins with the ID tokens of section 15)."""
CLIENT_AUTH_REASONS = ("unknown_client", "wrong_secret", "disabled")
DPOP_REASONS = ("missing", "malformed", "typ", "alg", "jwk", "signature", "htm", "htu", "iat",
                "jti", "replay", "nonce", "ath", "jkt")  # fmt: skip
_REASONS = frozenset(r.value for r in SessionEndReason)


class ServiceMetrics:
    """The service's business metrics in ``registry`` (a ``CollectorRegistry``, or None for
    prometheus-client's global one); :meth:`subscribe` connects them to the bus.

    Every label combination starts at 0, so rates work from the first scrape.

    Raises:
        ValueError: (prometheus-client) the metrics are already registered in ``registry`` —
            create one ``ServiceMetrics`` per registry.
    """

    def __init__(self, registry: Any = None) -> None:
        self.logins = counter(
            "authsvc_logins", "Login attempts, by outcome.", ("outcome",), registry
        )
        self.refreshes = counter(
            "authsvc_token_refreshes",
            "Refresh-token exchanges, by outcome.",
            ("outcome",),
            registry,
        )
        self.reuse_detections = counter(
            "authsvc_refresh_token_reuse_detections",
            "Already-rotated refresh tokens presented again (their session was revoked).",
            (),
            registry,
        )
        self.tokens_issued = counter(
            "authsvc_access_tokens_issued",
            "Access tokens issued, by signing algorithm and grant (login, refresh or"
            " client_credentials).",
            ("algorithm", "grant"),
            registry,
        )
        self.issued_by_alg = counter(
            "authsvc_tokens_issued",
            "Tokens signed, by JWS algorithm and kind (access: the JSON API's user tokens;"
            " client_credentials): when an algorithm's count stops, it can leave auth.algorithms.",
            ("alg", "kind"),
            registry,
        )
        self.verified_by_alg = counter(
            "authsvc_tokens_verified",
            "Tokens verified on authsvc's own routes, by JWS algorithm.",
            ("alg",),
            registry,
        )
        self.sessions_ended = counter(
            "authsvc_sessions_ended",
            "Sessions (refresh-token families) ended, by reason.",
            ("reason",),
            registry,
        )
        self.emails_sent = counter(
            "authsvc_emails_sent",
            "Emails handed to the mail transport, by kind (verify, reset) and outcome.",
            ("kind", "outcome"),
            registry,
        )
        self.audit_write_failures = counter(
            "authsvc_audit_write_failures",
            "Audit rows of failures that could not be written (logged, never a 500), by type.",
            ("type",),
            registry,
        )
        self.client_auth_failures = counter(
            "authsvc_oauth_client_auth_failures",
            "Failed client authentications at the OAuth endpoints, by reason.",
            ("reason",),
            registry,
        )
        self.dpop_failures = counter(
            "authsvc_dpop_proof_failures",
            "DPoP proofs refused at the token endpoint, by reason.",
            ("reason",),
            registry,
        )
        for reason in CLIENT_AUTH_REASONS:
            self.client_auth_failures.labels(reason)
        for reason in DPOP_REASONS:
            self.dpop_failures.labels(reason)
        for kind in EMAIL_KINDS:
            for email_outcome in EMAIL_OUTCOMES:
                self.emails_sent.labels(kind, email_outcome)
        for reason in SessionEndReason:
            self.sessions_ended.labels(reason.value)
        for outcome in LOGIN_OUTCOMES:
            self.logins.labels(outcome)
        for outcome in REFRESH_OUTCOMES:
            self.refreshes.labels(outcome)
        for algorithm in ALGORITHMS:
            for grant in GRANTS:
                self.tokens_issued.labels(algorithm, grant)
            for kind in TOKEN_KINDS:
                self.issued_by_alg.labels(algorithm, kind)
            self.verified_by_alg.labels(algorithm)

    def token_verified(self, alg: str) -> None:
        """Count one token of ``alg`` verified (the signer's ``on_verified`` hook; section 17).
        Only the known algorithms are counted: label values come from a fixed set."""
        if alg in ALGORITHMS:
            self.verified_by_alg.labels(alg).inc()

    def subscribe(self, bus: EventBus) -> ServiceMetrics:
        """Record the events published on ``bus`` from now on; returns ``self``."""
        bus.subscribe(LoginSucceeded, self._login_succeeded)
        bus.subscribe(LoginFailed, self._login_failed)
        bus.subscribe(AccessTokenIssued, self._token_issued)
        bus.subscribe(RefreshFailed, self._refresh_failed)
        bus.subscribe(RefreshTokenReuseDetected, self._reuse_detected)
        bus.subscribe(SessionEnded, self._session_ended)
        bus.subscribe(EmailSent, self._email_sent)
        bus.subscribe(MfaChallenged, self._mfa_challenged)
        bus.subscribe(MfaFailed, self._mfa_failed)
        bus.subscribe(AuditWriteFailed, self._audit_write_failed)
        bus.subscribe(ClientTokenIssued, self._client_token_issued)
        bus.subscribe(ClientAuthFailed, self._client_auth_failed)
        bus.subscribe(DpopProofRefused, self._dpop_refused)
        return self

    def _dpop_refused(self, event: DpopProofRefused) -> None:
        if event.reason in DPOP_REASONS:
            self.dpop_failures.labels(event.reason).inc()

    def _client_token_issued(self, event: ClientTokenIssued) -> None:
        if event.algorithm in ALGORITHMS:
            self.tokens_issued.labels(event.algorithm, "client_credentials").inc()
            self.issued_by_alg.labels(event.algorithm, "client_credentials").inc()

    def _client_auth_failed(self, event: ClientAuthFailed) -> None:
        if event.reason in CLIENT_AUTH_REASONS:
            self.client_auth_failures.labels(event.reason).inc()

    def _audit_write_failed(self, event: AuditWriteFailed) -> None:
        if event.type in AUDIT_EVENT_TYPES:
            self.audit_write_failures.labels(event.type).inc()

    def _mfa_challenged(self, event: MfaChallenged) -> None:
        self.logins.labels("mfa_required").inc()

    def _mfa_failed(self, event: MfaFailed) -> None:
        self.logins.labels("mfa_failed").inc()

    def _email_sent(self, event: EmailSent) -> None:
        if event.kind in EMAIL_KINDS and event.outcome in EMAIL_OUTCOMES:
            self.emails_sent.labels(event.kind, event.outcome).inc()

    def _login_succeeded(self, event: LoginSucceeded) -> None:
        self.logins.labels("success").inc()

    def _login_failed(self, event: LoginFailed) -> None:
        reason = event.reason
        outcome = reason if reason in LOGIN_OUTCOMES else "invalid_credentials"
        self.logins.labels(outcome).inc()

    def _session_ended(self, event: SessionEnded) -> None:
        if event.reason in _REASONS:
            self.sessions_ended.labels(event.reason).inc()

    def _token_issued(self, event: AccessTokenIssued) -> None:
        self.tokens_issued.labels(event.algorithm, event.grant).inc()
        if event.algorithm in ALGORITHMS:
            self.issued_by_alg.labels(event.algorithm, "access").inc()
        if event.grant == "refresh":
            self.refreshes.labels("success").inc()

    def _refresh_failed(self, event: RefreshFailed) -> None:
        self.refreshes.labels("invalid").inc()

    def _reuse_detected(self, event: RefreshTokenReuseDetected) -> None:
        self.refreshes.labels("reuse").inc()
        self.reuse_detections.inc()


def subscribe_service_metrics(bus: EventBus, registry: Any = None) -> ServiceMetrics:
    """``ServiceMetrics(registry).subscribe(bus)`` (a container provider's factory)."""
    return ServiceMetrics(registry).subscribe(bus)
