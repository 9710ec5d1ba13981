#!/usr/bin/env bash
# Run before `npm test`: the SSH tests check certificates with real OpenSSH (ssh-keygen, ssh and
# sshd). Installs Debian's packages when they are missing and this is a Debian machine we may
# change (root); otherwise says what to install.
set -euo pipefail
if command -v ssh-keygen >/dev/null 2>&1 && command -v ssh >/dev/null 2>&1 && [ -x /usr/sbin/sshd ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing openssh-client and openssh-server for the SSH certificate tests" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-client openssh-server >/dev/null
  exit 0
fi
echo "The SSH tests need OpenSSH: install openssh-client and openssh-server (ssh-keygen, ssh, /usr/sbin/sshd) and run the tests as root." >&2
exit 1
