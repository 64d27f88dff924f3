"""The layer packages install as top-level names: only our distribution may provide them."""

from importlib.metadata import packages_distributions

OUR_PACKAGES = ["domain", "application", "adapters", "entrypoints", "service_actuator"]


def test_top_level_packages_belong_to_authsvc_only() -> None:
    mapping = packages_distributions()
    for name in OUR_PACKAGES:
        assert mapping.get(name) == ["authsvc"], f"{name} is provided by {mapping.get(name)}"


def test_the_installed_package_ships_the_catalogs_and_the_mail_templates() -> None:
    """The wheel carries every ``.po`` (compiled at first use, ADR 0045) and the mails'
    templates: the installed distribution lists them."""
    from importlib.metadata import files

    shipped = {str(path) for path in files("authsvc") or []}
    for name in ("adapters/i18n/locales/de/LC_MESSAGES/messages.po",
                 "adapters/i18n/locales/en/LC_MESSAGES/messages.po",
                 "adapters/mail/templates/mail/verify.txt",
                 "adapters/mail/templates/mail/reset.html"):  # fmt: skip
        assert name in shipped, f"{name} is not in the installed package"
