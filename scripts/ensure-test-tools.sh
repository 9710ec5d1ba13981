#!/usr/bin/env bash
# Run before `npm test`: the SSH tests check certificates with real OpenSSH (ssh-keygen, ssh and
# sshd) and the ACME tests issue certificates from a real Pebble (pebble, pebble-challtestsrv).
# Installs Debian's packages for whatever is missing, with one apt-get update and one install,
# when this is a Debian machine we may change (root); otherwise says what to install.
set -euo pipefail

has() { command -v "$1" >/dev/null 2>&1; }

missing=()
if ! has ssh-keygen || ! has ssh; then missing+=(openssh-client); fi
if [ ! -x /usr/sbin/sshd ]; then missing+=(openssh-server); fi
if ! has pebble || ! has pebble-challtestsrv; then missing+=(pebble); fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && has apt-get; then
  echo "installing ${missing[*]} for the SSH certificate and ACME tests" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "The tests need Debian's packages ${missing[*]}: OpenSSH (ssh-keygen, ssh, /usr/sbin/sshd) for the SSH tests" \
  "and Pebble (pebble, pebble-challtestsrv) for the ACME tests. Install them and run the tests as root." >&2
exit 1
