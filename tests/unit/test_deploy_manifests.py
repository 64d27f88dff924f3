"""deploy/kubernetes (docs/deploy.md): every manifest validates offline, strictly, against the
Kubernetes version named here (``kubernetes-validate``), as written and as kustomize renders
each kustomization; the base Deployment keeps the properties the deploy guide promises."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.32.0"
KUSTOMIZATIONS = ("base", "demo")
KUBECTL = os.environ.get("AUTHSVC_TEST_KUBECTL") or shutil.which("kubectl")
"""kubectl for its built-in kustomize: named by AUTHSVC_TEST_KUBECTL (.ci/run sets it, so a
missing one fails there), else found on PATH, else the rendering tests skip."""


def manifest_files() -> list[Path]:
    return sorted(p for p in KUBERNETES.rglob("*.yaml") if p.name != "kustomization.yaml")


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def rendered(name: str) -> list[dict[str, Any]]:
    if KUBECTL is None:
        pytest.skip("kubectl (its built-in kustomize) is not installed; set AUTHSVC_TEST_KUBECTL")
    out = subprocess.run(
        [KUBECTL, "kustomize", str(KUBERNETES / name)], check=True, capture_output=True, text=True
    )
    return documents(out.stdout)


def validate(doc: dict[str, Any], where: str) -> None:
    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        raise AssertionError(f"{where}: {doc['kind']} {doc['metadata']['name']}: {exc}") from exc


def test_there_are_manifests() -> None:
    assert len(manifest_files()) >= 5


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(KUBERNETES)))
def test_each_manifest_file_validates(path: Path) -> None:
    docs = documents(path.read_text(encoding="utf-8"))
    assert docs, f"{path} holds no manifest"
    for doc in docs:
        validate(doc, str(path.relative_to(ROOT)))


@pytest.mark.parametrize("name", KUSTOMIZATIONS)
def test_each_rendered_kustomization_validates(name: str) -> None:
    for doc in rendered(name):
        validate(doc, f"kubectl kustomize deploy/kubernetes/{name}")


def test_an_invalid_manifest_is_refused() -> None:
    bad = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}
    bad["spec"] = {"replicas": "three", "selector": {}, "template": {}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSION, strict=True)


def test_the_base_has_every_kind_the_guide_names() -> None:
    kinds = {doc["kind"] for doc in rendered("base")}
    assert kinds == {"ConfigMap", "Deployment", "Job", "PodDisruptionBudget", "Service"}


def test_the_base_deployment_is_hardened_and_drains() -> None:
    (deployment,) = [doc for doc in rendered("base") if doc["kind"] == "Deployment"]
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    settings = tomllib.loads((KUBERNETES / "base" / "authsvc.toml").read_text(encoding="utf-8"))
    server = settings["server"]
    assert spec["replicas"] == 3
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["livenessProbe"]["httpGet"]["path"] == "/actuator/health/live"
    assert container["readinessProbe"]["httpGet"]["path"] == "/actuator/health/ready"
    assert {"requests", "limits"} <= set(container["resources"])
    drain = server["shutdown_delay"] + server["shutdown_timeout"]
    assert pod["terminationGracePeriodSeconds"] > drain
