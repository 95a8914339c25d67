# The test command: installs what the tests need, then runs every test.
.PHONY: test run bench

test:
	npm ci --no-audit --no-fund --loglevel=error
	go mod tidy -diff
	go test -race ./...

run:
	go run ./cmd/neobot

bench:
	go test -run '^$$' -bench . -benchmem ./...
