# Sourced by the image scripts: podman and buildah keep their images and containers in a scratch
# folder (PODMAN_SCRATCH, default /var/tmp/authsvc-podman), never in the user's own store, with
# the settings this kind of host needs (docs/deploy.md, "Building where no registry is reachable"):
# the vfs driver, runc (crun refuses hybrid cgroups), and ulimits at or below the inherited hard
# limits (the runtime lacks CAP_SYS_RESOURCE, so podman's defaults of about 1M fail).
PODMAN_SCRATCH=${PODMAN_SCRATCH:-/var/tmp/authsvc-podman}
mkdir -p "$PODMAN_SCRATCH"
if [ ! -f "$PODMAN_SCRATCH/storage.conf" ]; then
    cat >"$PODMAN_SCRATCH/storage.conf" <<CONF
[storage]
driver = "vfs"
runroot = "$PODMAN_SCRATCH/run"
graphroot = "$PODMAN_SCRATCH/storage"
CONF
fi
if [ ! -f "$PODMAN_SCRATCH/containers.conf" ]; then
    cat >"$PODMAN_SCRATCH/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
fi
export CONTAINERS_STORAGE_CONF="$PODMAN_SCRATCH/storage.conf"
export CONTAINERS_CONF="$PODMAN_SCRATCH/containers.conf"
# The host's CA bundle, passed to pip/uv inside the build as a secret (a proxy that re-signs TLS).
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
