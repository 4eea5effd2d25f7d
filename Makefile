# nowserving — make help lists the targets.
GO       ?= go
BIN      := bin/nowserving
CONFIG   ?= testdata/hospital.yaml
PKGS     := ./...
FUZZTIME ?= 20s
SOAK_TICKETS ?= 20000
# Test binaries run at a time (go test -p): twice the CPUs. The suite
# waits more than it computes (servers starting, Galera's state
# transfers, time-outs it proves): on the 2-core machine CI runs on,
# .ci/run took 8 min at one binary per CPU and 6 min 20 s at 4.
TESTP    ?= $(shell echo $$(( $$(nproc) * 2 )))

.PHONY: help build run test check fmt vet lint fuzz bench soak clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/nowserving
	$(GO) build -o $(BIN) ./cmd/nowserving

run: build ## run the daemon on embedded SQLite with the demo hospital
	./$(BIN) serve --config $(CONFIG)

test: ## all tests with the race detector; as root, installs and starts what they need first (.ci/setup)
	@.ci/setup
	$(GO) vet $(PKGS)
	@# A race-detector binary sleeps a second at every exit (GORACE atexit_sleep_ms)
	@# to let late reports print; each test binary reports its races before it ends.
	GORACE="atexit_sleep_ms=0 $(GORACE)" $(GO) test -race -count=1 -p $(TESTP) -timeout 30m $(PKGS)

check: fmt vet test fuzz ## gofmt, go vet, staticcheck, tests and a short fuzz run
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

fmt: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi

vet: ## go vet
	$(GO) vet $(PKGS)

fuzz: ## run every fuzz target for FUZZTIME each
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: ## benchmarks of stores, protocol and codecs
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

soak: ## the busy-day test (TestBenchDay) at full size, no race detector anywhere: SOAK_TICKETS tickets (20,000; make test plays 2,000), screenshots in out/soak
	NOWSERVING_HALL_DAY_TICKETS=$(SOAK_TICKETS) NOWSERVING_ARTIFACTS=$${NOWSERVING_ARTIFACTS:-$(CURDIR)/out/soak} \
	  $(GO) test -count=1 -timeout 60m -run '^TestBenchDay$$' -v ./cmd/nowserving

clean: ## remove build output, the demo databases and the demo's out/ folder
	rm -rf bin out nowserving-demo.db nowserving-demo.db-* nowserving-bank.db nowserving-bank.db-* nowserving-rush.db nowserving-rush.db-* nowserving-scale.db nowserving-scale.db-* scale.yaml nowserving-busyday.db nowserving-busyday.db-*
