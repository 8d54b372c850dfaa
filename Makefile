# The two front-door commands are `make dev` and `make test` (see README.md).
SHELL := /bin/bash
GO ?= go
FUNCTIONS := ingest query ws-connect ws-message ws-disconnect migrate

.PHONY: dev test test-core test-infra build synth deploy bench pg clean

# Run the relay locally: private Postgres under .localdev/ (unless DATABASE_URL
# is set), migrations, then HTTP + WebSocket on 127.0.0.1:8080 (BUZZ_ADDR).
dev:
	@source localdev/pg.sh && $(GO) run ./localdev

# Same Postgres bootstrap, then every test of the core and of the CDK app.
test: test-core test-infra

test-core:
	@source localdev/pg.sh && $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...

# Start (or reuse) the local Postgres and print its DATABASE_URL.
pg:
	@source localdev/pg.sh && echo "DATABASE_URL=$$DATABASE_URL"

# Lambda zips: provided.al2023, arm64, one bootstrap per function.
build:
	@for f in $(FUNCTIONS); do \
	  mkdir -p build/$$f && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o build/$$f/bootstrap ./functions/$$f && \
	  (cd build/$$f && rm -f ../$$f.zip && $(GO) run ../../localdev/zipdir bootstrap ../$$f.zip) || exit 1; \
	done; echo "built: $(addprefix build/,$(addsuffix .zip,$(FUNCTIONS)))"

bench:
	@source localdev/pg.sh && $(GO) test -run '^$$' -bench . -benchtime 3s ./...

clean:
	rm -rf build
