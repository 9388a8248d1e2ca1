#!/usr/bin/env bash
# Installs the Citus extension into this machine's PostgreSQL when it is missing (issue 45):
#   scripts/install-citus.sh [SOURCE_TARBALL]
# 1. Already installed (citus.so in PostgreSQL's library folder, citus.control in its extension
#    folder): nothing to do.
# 2. A build of the same source for the same PostgreSQL is cached (~/.cache/audit-ledger/citus/):
#    its files are copied into place (seconds).
# 3. The official package repository answers (packagecloud's citusdata/community): its package is
#    installed with apt. That is what an operator should use where it is reachable.
# 4. Otherwise it is built from the source tarball (default: ../shared/vendor/citus/citus-13.2.2.tar.gz,
#    the last release that supports PostgreSQL 15) with the patches beside it, staged into the
#    cache and copied into place (1 min 25 s on this two-core machine, 2026-11-28, plus its apt packages).
# Needs root (apt, PostgreSQL's folders). Prints what it did; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tarball="${1:-$here/../../shared/vendor/citus/citus-13.2.2.tar.gz}"
# A clone elsewhere than beside ../shared (CI's, say) finds the workspace's vendored copy.
[[ -f "$tarball" || $# -gt 0 ]] || tarball=/work/shared/vendor/citus/citus-13.2.2.tar.gz
pg_config="${PG_CONFIG:-pg_config}"
libdir="$("$pg_config" --pkglibdir)"
sharedir="$("$pg_config" --sharedir)"
pg_version="$("$pg_config" --version | awk '{print $2}')"
pg_major="${pg_version%%.*}"

if [[ -f "$libdir/citus.so" && -f "$sharedir/extension/citus.control" ]]; then
  echo "citus: already installed in $libdir"
  exit 0
fi

if [[ ! -f "$tarball" ]]; then
  echo "citus: no source tarball at $tarball" >&2
  exit 1
fi
source_id="$(sha256sum "$tarball" | cut -c1-16)"
for p in "$(dirname "$tarball")"/*.patch; do [[ -f "$p" ]] && source_id="$source_id-$(sha256sum "$p" | cut -c1-8)"; done
cache="${XDG_CACHE_HOME:-$HOME/.cache}/audit-ledger/citus/$source_id-pg$pg_version"

install_staged() {
  # The staged tree holds exactly what `make install` wrote, under the same absolute paths.
  cp -a "$cache/stage/." /
  echo "citus: installed from $cache into $libdir"
}

if [[ -f "$cache/stage$libdir/citus.so" ]]; then
  install_staged
  exit 0
fi

# The official packages, where their repository answers (not from these machines: docs/scaling.md).
if curl -fsS --max-time 5 -o /dev/null "https://repos.citusdata.com/community/debian/dists/" 2>/dev/null; then
  curl -fsS https://install.citusdata.com/community/deb.sh | bash
  apt-get install -y "postgresql-$pg_major-citus-13.2" || apt-get install -y "postgresql-$pg_major-citus"
  echo "citus: installed from the official package repository"
  exit 0
fi

echo "citus: building $(basename "$tarball") for PostgreSQL $pg_version (a minute or two on two cores)"
deps=(build-essential "postgresql-server-dev-$pg_major" liblz4-dev libzstd-dev libkrb5-dev libssl-dev libselinux1-dev libxslt1-dev libpam0g-dev libreadline-dev)
missing=()
for d in "${deps[@]}"; do dpkg -s "$d" >/dev/null 2>&1 || missing+=("$d"); done
if ((${#missing[@]} > 0)); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)"
for p in "$(dirname "$tarball")"/*.patch; do
  [[ -f "$p" ]] || continue
  (cd "$src" && patch -p1 --forward < "$p")
done
(cd "$src" && ./configure --without-libcurl PG_CONFIG="$pg_config" >"$work/configure.log" 2>&1) || { tail -40 "$work/configure.log" >&2; exit 1; }
(cd "$src" && make -j"$(nproc)" >"$work/make.log" 2>&1) || { tail -40 "$work/make.log" >&2; exit 1; }
rm -rf "$cache"
mkdir -p "$cache/stage"
(cd "$src" && make install DESTDIR="$cache/stage" >"$work/install.log" 2>&1) || { tail -40 "$work/install.log" >&2; exit 1; }
install_staged
