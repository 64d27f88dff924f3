"""The layer packages install as top-level names: only our distribution may provide them."""

from importlib.metadata import packages_distributions

OUR_PACKAGES = ["domain", "application", "adapters", "entrypoints", "service_actuator"]


def test_top_level_packages_belong_to_authsvc_only() -> None:
    mapping = packages_distributions()
    for name in OUR_PACKAGES:
        assert mapping.get(name) == ["authsvc"], f"{name} is provided by {mapping.get(name)}"
