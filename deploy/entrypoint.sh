#!/bin/sh
# Runs neobot as the unprivileged user "node". A fly volume is mounted
# owned by root, so when started as root this hands /data to node first.
set -e
if [ "$(id -u)" = "0" ]; then
	chown -R node:node /data
	exec setpriv --reuid=node --regid=node --init-groups -- neobot "$@"
fi
exec neobot "$@"
