# gvs: an Open vSwitch compatible switch in Go. See README.md.

GO           ?= go
BIN          := $(CURDIR)/bin
RUN          := $(CURDIR)/run
TEST_TIMEOUT ?= 12m
FUZZ_TIME    ?= 10s

.PHONY: all build run test deps vet bench bench-quick bench-go fuzz generate clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# Runs gvs-vswitchd in the foreground with all its state under ./run.
run: build
	@mkdir -p $(RUN)
	@echo "gvs-vswitchd: state in $(RUN); in another shell use, for example:"
	@echo "  export OVS_RUNDIR=$(RUN)"
	@echo "  ovs-vsctl init"
	@echo "  ovs-vsctl add-br br0"
	@echo "  ovs-vsctl add-port br0 IFACE"
	@echo "  ovs-vsctl show"
	@echo "  ovs-appctl -t ovs-vswitchd dpif/show"
	@echo "  ovs-appctl -t ovs-vswitchd exit"
	OVS_RUNDIR=$(RUN) OVS_DBDIR=$(RUN) OVS_LOGDIR=$(RUN) \
		$(BIN)/gvs-vswitchd --pidfile --log-file

deps:
	./scripts/install-test-deps.sh

vet:
	$(GO) vet ./...

# go test's own per-package ok/FAIL lines end the output.
test: deps vet
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

# The benchmark suite (bench/): gvs beside a direct veth pair, the Linux
# bridge and Debian's Open vSwitch, in network namespaces; needs root.
# QUICK=1: one run of fewer, shorter tests. Results in BENCH_OUT/<time>/.
# The scale part (1,000 ports; 100 with QUICK=1) runs last; only it:
# make bench BENCH_ARGS="-only scale"; the OpenFlow part (OVN pipeline vs
# NORMAL, 100,000-flow add-flows and bundle): BENCH_ARGS="-only openflow".
# A gvs setup that does not forward is reported as skipped, not failed.
BENCH_OUT ?= $(CURDIR)/bench-results
BENCH_ARGS ?=

bench: build
	$(GO) build -o $(BIN)/gvs-bench ./bench/cmd/gvs-bench
	./scripts/install-test-deps.sh
	$(BIN)/gvs-bench $(if $(QUICK),-quick) -bin $(BIN) -out $(BENCH_OUT) $(BENCH_ARGS)

bench-quick:
	$(MAKE) bench QUICK=1

# The Go micro-benchmarks (parser, classifier, packet path, OVSDB engine).
bench-go:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Runs every fuzz target for FUZZ_TIME each.
fuzz:
	@set -e; grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do \
		dir=$$(dirname "$$file"); \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
			echo "== $$dir $$target"; \
			$(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZ_TIME) "$$dir"; \
		done; \
	done

generate:
	$(GO) generate ./...

clean:
	rm -rf $(BIN) $(RUN)
