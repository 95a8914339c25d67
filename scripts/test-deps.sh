#!/usr/bin/env bash
# Installs from Debian's packages what the tests need and the machine
# lacks: Chromium (the chat page's browser tests) and PostgreSQL (the
# PostgreSQL store's tests, which start a throwaway server with initdb and
# pg_ctl). One apt-get run for both; nothing when both are there.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ! command -v pg_ctl >/dev/null 2>&1 && ! compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null; then
	need+=(postgresql)
fi
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "installing ${need[*]} from Debian's packages" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
