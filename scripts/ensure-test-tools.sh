#!/usr/bin/env bash
# Run before `npm test`: the SSH tests check certificates with real OpenSSH (ssh-keygen, ssh and
# sshd), the ACME tests issue certificates from a real Pebble (pebble, pebble-challtestsrv), and
# the benchmark's load generator is checked with a real wrk.
# With --bench, run before `npm run bench`: the load generator wrk (without it the benchmark
# falls back to autocannon), OpenSSH's client and server for the agent rows' `ssh -R` baseline
# and HAProxy for the static-address edge row's baseline (without them those baselines are
# skipped); so a missing tool is only a note.
# Installs Debian's packages for whatever is missing, with one apt-get update and one install,
# when this is a Debian machine we may change (root); otherwise says what to install.
set -euo pipefail

has() { command -v "$1" >/dev/null 2>&1; }

missing=()
if [ "${1:-}" = --bench ]; then
  purpose="the benchmark's load generator and its ssh -R and HAProxy baselines"
  if ! has wrk; then missing+=(wrk); fi
  if ! has ssh-keygen || ! has ssh; then missing+=(openssh-client); fi
  if [ ! -x /usr/sbin/sshd ]; then missing+=(openssh-server); fi
  if ! has haproxy && [ ! -x /usr/sbin/haproxy ]; then missing+=(haproxy); fi
else
  purpose="the SSH certificate, ACME and benchmark tests"
  if ! has wrk; then missing+=(wrk); fi
  if ! has ssh-keygen || ! has ssh; then missing+=(openssh-client); fi
  if [ ! -x /usr/sbin/sshd ]; then missing+=(openssh-server); fi
  if ! has pebble || ! has pebble-challtestsrv; then missing+=(pebble); fi
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && has apt-get; then
  echo "installing ${missing[*]} for $purpose" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
if [ "${1:-}" = --bench ]; then
  echo "not installed: Debian's ${missing[*]}: without wrk the benchmark uses autocannon's CLI instead;" \
    "without OpenSSH (openssh-client, openssh-server) the agent rows' ssh -R baseline is skipped;" \
    "without haproxy the static-address edge row's HAProxy baseline is skipped" >&2
  exit 0
fi
echo "The tests need Debian's packages ${missing[*]}: OpenSSH (ssh-keygen, ssh, /usr/sbin/sshd) for the SSH tests" \
  "Pebble (pebble, pebble-challtestsrv) for the ACME tests and wrk for the benchmark's tests. Install them and run the tests as root." >&2
exit 1
