# The test command: installs what the tests need, then runs every test.
.PHONY: test run bench bench-reply bench-reply-ab mutate

test:
	npm ci --no-audit --no-fund --loglevel=error
	@# Chromium for the chat page's browser tests, PostgreSQL for the
	@# PostgreSQL store's: from Debian's packages, when missing.
	scripts/test-deps.sh
	go mod tidy -diff
	go test -race ./...
	@# Every benchmark outside cmd/neobot once, so none rots unnoticed: it
	@# checks they run, never how fast (docs/budgets.md).
	go test -run '^$$' -bench . -benchtime=1x ./core/... ./store/... ./adapters/... ./cmd/neobot/internal/...
	@# The alerting rules and the dashboard's queries, through Prometheus's
	@# own parsers (promtool check rules' rulefmt.ParseFile), in a module of
	@# their own so Prometheus stays out of neobot's go.mod.
	cd deploy/prometheus/rulecheck && go mod tidy -diff && go test -count=1 ./...

run:
	go run ./cmd/neobot

bench:
	go test -run '^$$' -bench . -benchmem ./...

# The reply path through the built binary (issue 19's table): the Slack fake
# over TLS, an instant model, the filesystem MCP server; reply p50/p99,
# first status, CPU per reply, peak RSS, store size per turn.
bench-reply:
	npm ci --no-audit --no-fund --loglevel=error
	go test -run '^$$' -bench ReplyBinary -benchtime=300x ./cmd/neobot/

# The same, the working tree against revision OLD, alternating PAIRS runs
# of each (this machine's runs vary 10-20%): make bench-reply-ab OLD=main~3
PAIRS ?= 6
bench-reply-ab:
	npm ci --no-audit --no-fund --loglevel=error
	scripts/bench-ab.sh $(OLD) $(PAIRS)

# Mutation testing of the safety paths (slow: minutes per package). Each
# surviving mutant is a change no test notices; docs/testing.md has the
# figures and the survivors' reasons.
GREMLINS := github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
MUTATE_PKGS := ./core/tools ./core/conversation ./core/compact ./store
mutate:
	for p in $(MUTATE_PKGS); do go run $(GREMLINS) unleash --workers 1 $$p || exit 1; done
	python3 scripts/mutate-core.py
