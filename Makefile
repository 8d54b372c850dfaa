# The two front-door commands are `make dev` and `make test` (see README.md).
SHELL := /bin/bash
GO ?= go
FUNCTIONS := ingest query ws-connect ws-authorize ws-message ws-disconnect ws-push fanout migrate egresscheck expiry-sweep push-sender push-dialer workflow-runner

.PHONY: destroy restore dev test test-all test-core test-smoke test-processes test-build test-infra smoke build synth deploy bench bench-ws record-profiles pg clean fuzz stop reset

# Run the relay locally: private Postgres under .localdev/ (unless DATABASE_URL
# is set), migrations, then HTTP + WebSocket on 127.0.0.1:8080 (BUZZ_ADDR).
# BUZZ_LAMBDA=processes: every route runs its function's own binary (and
# migrate runs first, as CloudFormation runs it), with local-kms for the key.
dev:
	@$(if $(filter processes,$(BUZZ_LAMBDA)),export BUZZ_PG_DB=buzz_kms &&) source localdev/pg.sh && source localdev/s3.sh && source localdev/ddb.sh && \
	  $(if $(filter processes,$(BUZZ_LAMBDA)),source localdev/kms.sh &&) $(GO) run ./localdev

# Same Postgres bootstrap, then every test of the core, the smoke checks
# against `make dev`, and the tests of the CDK app; then the fuzz targets.
# When this checkout's Postgres was not running before, every local service
# the run started (Postgres, the local S3 server, local-kms) is stopped at
# the end, also when a test fails or make is interrupted; when it was running
# (a `make dev` elsewhere), everything stays.
test:
	@if localdev/stop.sh --running >/dev/null; then keep=1; else keep=0; fi; \
	trap '[ $$keep = 1 ] || localdev/stop.sh' EXIT; \
	$(MAKE) --no-print-directory test-all

# Every suite side by side (localdev/suites.sh): the shared steps first (vet,
# every test compiled once, the functions built once for this machine), then
# core, e2e, idle, processes, smoke, build (+ infra) and fuzz in the
# background, each logged; at the end each log and each suite's time.
test-all:
	@localdev/suites.sh

# Stop every local service this checkout's scripts started (the Postgres
# clusters of localdev/pg.sh, local-kms, any pid file under .localdev/).
stop:
	@localdev/stop.sh

# Stop them, say what is deleted, then delete .localdev/ (local data).
reset:
	@localdev/stop.sh --reset

# The idle apps' test (5 minutes of NDK, welshman and Buzz desktop left
# idle, issue 37) mostly waits: it runs in a go test process of its own,
# alongside every other package's tests (its relay, database, session
# table and S3 server are its own, as each e2e test's are), and its output
# follows theirs. Sessions live in DynamoDB (the local dynalite) in every
# mode, as they ship: there is one session store.
IDLE_TEST := ^TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements$$
test-core:
	@source localdev/pg.sh && source localdev/ddb.sh && $(GO) vet ./... && \
	  $(GO) test -count=1 -run '^$$' ./localdev/e2e >/dev/null && \
	  { $(GO) test -count=1 -timeout 20m -run '$(IDLE_TEST)' ./localdev/e2e >.localdev/idle-test.log 2>&1 & idle=$$!; } && \
	  $(GO) test -count=1 -timeout 20m -skip '$(IDLE_TEST)' ./...; rc=$$?; \
	  wait $$idle; irc=$$?; echo "--- the idle apps' test (./localdev/e2e -run '$(IDLE_TEST)'):"; cat .localdev/idle-test.log; \
	  [ $$rc = 0 ] && [ $$irc = 0 ]

# End-to-end checks of a running relay with a go-nostr client (NIP-11,
# /healthz, AUTH, channel, post, window query, live delivery, COUNT, Buzz
# desktop's upload of a blob above the direct limit):
#   make smoke URL=http://127.0.0.1:8080
#   make smoke URL=<PublicUrl>   (after make deploy: one URL, wss:// derived from it)
URL ?=
WS_URL ?=
SMOKE_ARGS ?=
smoke:
	@$(GO) run ./localdev/smoke -url "$(URL)" $(if $(WS_URL),-ws "$(WS_URL)") $(SMOKE_ARGS)

# CI: start `make dev` on a free port, run `make smoke` against it, stop it.
test-smoke:
	@localdev/smoke-dev.sh

# BUZZ_LAMBDA=processes: the smoke checks against `make dev` in that mode,
# then the end-to-end suite with every route through its function's own
# binary (localdev/e2e, processes.go).
test-processes:
	@BUZZ_LAMBDA=processes localdev/smoke-dev.sh
	@source localdev/pg.sh && source localdev/ddb.sh && BUZZ_LAMBDA=processes $(GO) test -count=1 -timeout 20m ./localdev/e2e

# The Lambda zips as they ship (arm64), once, with their sizes.
test-build: build

# Fuzz every parser for FUZZTIME each (seed corpora under testdata/fuzz run
# in every plain `go test` too); new failing inputs land in testdata/fuzz.
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# fail a target with a bare "context deadline exceeded" as the time runs out
# on a busy machine (go.dev/issue/75804); 50,000 runs take 2-10 s here.
FUZZTIME ?= 50000x
FUZZ_TARGETS := FuzzParse:./shared/transport/wsrelay FuzzParse:./shared/service/query FuzzNostrFilter:./shared/service/query \
  FuzzCheck:./shared/domain/eventcheck FuzzParse:./shared/domain/authevent FuzzVerify:./shared/domain/sigverify \
  FuzzParse:./shared/domain/blossom FuzzServerHost:./shared/domain/authevent
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  $(GO) test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(FUZZTIME) "$${t#*:}" || exit 1; \
	done

# Start (or reuse) the local Postgres and print its DATABASE_URL (make stop stops it).
pg:
	@source localdev/pg.sh && echo "DATABASE_URL=$$DATABASE_URL"

# Lambda zips: provided.al2023, arm64, one bootstrap per function.
build:
	@for f in $(FUNCTIONS); do \
	  mkdir -p build/$$f && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o build/$$f/bootstrap ./functions/$$f && \
	  (cd build/$$f && rm -f ../$$f.zip && $(GO) run ../../localdev/zipdir bootstrap ../$$f.zip) || exit 1; \
	done; for f in $(FUNCTIONS); do echo "built: build/$$f.zip $$(stat -c %s build/$$f.zip) bytes"; done

# Record the idle session of each client library the cost tool prices
# (go run ./localdev/cost -client buzz|ndk|welshman|nostr-tools) into
# localdev/cost/profiles/ (localdev/e2e TestRecordIdleProfiles, 10 minutes).
record-profiles:
	@source localdev/pg.sh && BUZZ_RECORD_PROFILES=10m $(GO) test -count=1 -parallel 4 -timeout 60m -run TestRecordIdleProfiles -v ./localdev/e2e

bench:
	@source localdev/pg.sh && source localdev/ddb.sh && $(GO) test -run '^$$' -bench . -benchtime 3s ./...

# wsbench with API Gateway's costs off, then on (APIGW_COSTS, docs/benchmarks.md);
# `APIGW_COSTS=on make bench` runs the Go benchmarks with them.
bench-ws:
	@source localdev/pg.sh && source localdev/ddb.sh && $(GO) run ./localdev/wsbench -subs 500 -stuck 1 && \
	  $(GO) run ./localdev/wsbench -subs 500 -stuck 1 -costs

clean:
	rm -rf build

# --- infra (CDK app in infra/, its own Go module; see docs/deploy.md) -------
# The aws-cdk CLI is pinned in infra/package.json (npm ci from the lockfile).
# jsii runs on the machine's Node.js; silence its Node 20 end-of-life banner.
CDK_ENV := JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 CDK_DISABLE_CLI_TELEMETRY=true
CDK := cd infra && $(CDK_ENV) ./node_modules/.bin/cdk
# Extra CLI arguments, e.g. CDK_ARGS='-c community=buzz-example -c egress=nat-instance'
CDK_ARGS ?=

infra/node_modules/.bin/cdk: infra/package.json infra/package-lock.json
	cd infra && npm ci --no-audit --no-fund
	@touch $@

# CloudFormation template, offline, into infra/cdk.out/ (needs the build zips).
synth: build infra/node_modules/.bin/cdk
	$(CDK) synth -q --no-notices $(CDK_ARGS)
	@ls infra/cdk.out/*.template.json

# Deploy with the caller's AWS credentials (bootstrap the account once first:
# cd infra && npx cdk bootstrap). OWNER=<npub or hex>: the default
# community's first NIP-86 operator (docs/deploy.md). Without -c alarmEmail
# in CDK_ARGS it asks for an alarm address (or says alarms go nowhere):
# localdev/alarm-email.sh.
OWNER ?=
deploy: build infra/node_modules/.bin/cdk
	@alarm=$$(./localdev/alarm-email.sh '$(CDK_ARGS)') && \
	  $(CDK) deploy --all --no-notices $(if $(OWNER),-c owner=$(OWNER)) $(CDK_ARGS) $$alarm

# Delete the stack (cdk destroy, with the same CDK_ARGS as its deploy), then
# print what it leaves behind per its template (snapshot, key, secret,
# bucket), each with its monthly cost and the command that removes it
# (localdev/retained; docs/deploy.md, "Deleting a stack").
destroy: synth
	$(CDK) destroy --all --no-notices $(CDK_ARGS)
	@for t in infra/cdk.out/*.template.json; do $(GO) run ./localdev/retained -template "$$t"; done

# Restore the stack's database through CloudFormation (localdev/restore;
# docs/deploy.md, "Backups and restore"): synthesize with the stack's
# CDK_ARGS, check the template, print the steps (RESTORE_ARGS='-snapshot
# <id>' or '-time <RFC 3339>'; add -run to run them).
RESTORE_ARGS ?=
restore: synth
	@$(GO) run ./localdev/restore -cdk-args '$(CDK_ARGS)' $(RESTORE_ARGS)

# Template assertions, then a real `cdk synth` through the pinned CLI.
test-infra: infra/node_modules/.bin/cdk
	cd infra && $(CDK_ENV) $(GO) vet ./... && BUZZ_REQUIRE_CDK=1 $(CDK_ENV) $(GO) test -count=1 -timeout 15m ./...
