"""Code that makes ``prometheus_client`` unimportable in a child interpreter, as if the
``metrics`` extra were not installed: prepend ``REFUSE_PROMETHEUS`` to a ``python -c`` script."""

REFUSE_PROMETHEUS = """
import importlib.abc, sys

class RefusePrometheus(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "prometheus_client" or name.startswith("prometheus_client."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, RefusePrometheus())
"""
