# scripts/lib.sh - helpers sourced by scripts/demo.sh and scripts/test.sh.

# ensure_packages PKG...: installs the Debian packages among PKG that are
# not installed yet (apt-get update first), and does nothing when all are.
# Needs root only when something is missing. Off Debian (no dpkg-query) it
# assumes the tools are there.
ensure_packages() {
    command -v dpkg-query >/dev/null 2>&1 || return 0
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q 'install ok installed' || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "parsum: missing Debian packages: ${missing[*]}" >&2
        echo "parsum: run as root, or: sudo apt-get install -y ${missing[*]}" >&2
        return 1
    fi
    echo "parsum: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Parallel build jobs: one per processor.
njobs() {
    nproc 2>/dev/null || echo 2
}
