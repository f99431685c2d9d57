# The only commands a newcomer needs: make demo, make test (and make, make lint, make bench).
# Each installs what it is missing, so a fresh machine needs nothing else.

SWIFT ?= swift
VENV := .venv
PYTHON := $(VENV)/bin/python
BIN := .build/release/cloudbackup
# The Swift runtime and Foundation linked into the binary: the dynamic loader's relocations
# of their shared libraries were half of a bare run's CPU (11.9 against 6.6 ms for --help),
# which every cron run and every small file pays. Every release build takes the same flags,
# so one product's build does not redo another's.
RELEASE := $(SWIFT) build -c release --static-swift-stdlib
APT_PACKAGES := libcurl4-openssl-dev libssl-dev libdeflate-dev

.PHONY: all build install uninstall test lint lint-docs docs sanitize fuzz bench demo soak deps \
	venv clean

all: build

# System headers for the CCurl / COpenSSL targets; apt-get only when they are missing.
# $(call apt_install,PACKAGES): installs what dpkg does not have yet (root, else via sudo).
apt_install = dpkg -s $(1) >/dev/null 2>&1 || { \
	echo "installing $(1)"; \
	SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $(1) >/dev/null; }

deps:
	@$(call apt_install,$(APT_PACKAGES))

# A project-local Python for the JSON Schema check, the emulator's tests and the bench peers.
# Debian's python3 has no venv (ensurepip) without python3-venv.
$(VENV)/.ready: Tests/requirements.txt
	@$(call apt_install,python3-venv)
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check -r Tests/requirements.txt
	touch $@

venv: $(VENV)/.ready

build: deps
	$(RELEASE) --product cloudbackup

# The release binary, its man page and its completions, in the folders man, bash-completion,
# zsh (site-functions is in its fpath) and fish look in under PREFIX; DESTDIR stages the tree
# for a package. The page and the scripts come from the built binary (cloudbackup manpage,
# cloudbackup completion SHELL), so they describe exactly the options it takes.
PREFIX ?= $(HOME)/.local
DESTDIR ?=
ROOT = $(DESTDIR)$(PREFIX)
MAN_PAGE := share/man/man1/cloudbackup.1
BASH_COMPLETION := share/bash-completion/completions/cloudbackup
ZSH_COMPLETION := share/zsh/site-functions/_cloudbackup
FISH_COMPLETION := share/fish/vendor_completions.d/cloudbackup.fish
INSTALLED := bin/cloudbackup $(MAN_PAGE) $(BASH_COMPLETION) $(ZSH_COMPLETION) $(FISH_COMPLETION)
# Written here first, so `install -m 644` sets their mode whatever the umask.
GENERATED := .build/install

install: build
	mkdir -p $(GENERATED)
	$(BIN) manpage > $(GENERATED)/cloudbackup.1
	for shell in bash zsh fish; do $(BIN) completion $$shell > $(GENERATED)/$$shell || exit 1; done
	install -D -m 755 $(BIN) "$(ROOT)/bin/cloudbackup"
	install -D -m 644 $(GENERATED)/cloudbackup.1 "$(ROOT)/$(MAN_PAGE)"
	install -D -m 644 $(GENERATED)/bash "$(ROOT)/$(BASH_COMPLETION)"
	install -D -m 644 $(GENERATED)/zsh "$(ROOT)/$(ZSH_COMPLETION)"
	install -D -m 644 $(GENERATED)/fish "$(ROOT)/$(FISH_COMPLETION)"

# Exactly what install wrote; the folders stay, as other programs' files may share them.
uninstall:
	if [ -d "$(ROOT)" ]; then cd "$(ROOT)" && rm -f $(INSTALLED); fi

# The day and streak tests run again under several zones, so a hidden dependence on the
# machine's zone fails loudly; the whole suite runs last, so its summary closes the output.
# A zone is process-wide, so each zone is a process of its own; they run the test binary
# itself, two at a time: `swift test` would plan the build and run an empty XCTest pass
# first, 1.7 of each zone's 2.9 s. A failing zone prints its whole output.
TEST_ZONES := America/New_York Europe/London Australia/Lord_Howe Asia/Kathmandu Pacific/Apia
TEST_BINARY := .build/debug/cloudbackupPackageTests.xctest
ZONE_TESTS := $(TEST_BINARY) --testing-library swift-testing --filter "Calendar|Streak" \
	--skip TransitionSweep

# The short soak of `make test`: `make soak`'s low caps (10 kept revisions, 6 hours' age,
# 30-minute tokens, 3 items a page) with a pin cap of 10 and half a day a round, 100 rounds of
# 5 devices (under a minute). It must cross every limit (--require-limits), the pin cap among
# them: a check that owes more revisions than the pins free reads them in batches.
TEST_SOAK := --rounds 100 --devices 5 --seed 2 --hours-per-round 12 --pin-cap 10 --require-limits

# Every emulator the Swift suites start appends its requests to REQUEST_LOG; afterwards the
# sweep checks each Drive request against Google's discovery documents (method and path,
# declared query parameters, their values, `fields` paths) and fails on any violation.
REQUEST_LOG := .build/emulator-requests.jsonl

# Debian's age (age, age-keygen): the reference tool the envelope's interop tests run. The
# lint goes first (half a minute): a formatting slip or an undocumented BackupKit declaration
# fails CI as a test would.
test: deps venv
	@$(call apt_install,age)
	@$(MAKE) --no-print-directory lint
	$(SWIFT) build --build-tests
	@$(MAKE) --no-print-directory docs
	printf '%s\n' $(TEST_ZONES) | xargs -P 2 -I ZONE sh -c \
		'out=$$(TZ=ZONE $(ZONE_TESTS) 2>&1) || { printf "%s\n" "$$out"; echo "failed under TZ=ZONE"; exit 255; }; \
		printf "TZ=%s: %s\n" ZONE "$$(printf "%s\n" "$$out" | grep -o "Test run with.*")"'
	rm -f $(REQUEST_LOG)
	GOOGLE_EMULATOR_REQUEST_LOG=$(abspath $(REQUEST_LOG)) $(PYTHON) Tests/Soak/soak.py \
		--bin .build/debug/cloudbackup $(TEST_SOAK) $(SOAK_FLAGS)
	CLOUDBACKUP_PYTHON=$(abspath $(PYTHON)) GOOGLE_EMULATOR_REQUEST_LOG=$(abspath $(REQUEST_LOG)) \
		$(SWIFT) test --skip-build --parallel
	$(PYTHON) Tests/Emulator/drive_discovery.py sweep $(REQUEST_LOG)

lint: lint-docs
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

# Every public declaration of BackupKit documented (AllPublicDeclarationsHaveDocumentation, in
# a second configuration so the rest of the tree is not held to it): a library's users read
# its API in their editor, so a declaration without its comment fails `make lint`.
lint-docs:
	$(SWIFT) format lint --strict --recursive --configuration .swift-format-docs Sources/BackupKit

# BackupKit's documentation as a static site in .build/docs (serve the folder with any web
# server): the articles of Sources/BackupKit/BackupKit.docc and every public declaration's doc
# comment. A docc warning fails it (a ``Symbol`` link that resolves to nothing, a Topics entry
# that names no symbol), so `make test` runs it after its build, where it takes 3 s.
# The symbol graph is extracted from the debug build's BackupKit module (0.2 s), not emitted
# by the compiler (-emit-symbol-graph): an -Xswiftc flag changes every target's command line,
# so the next plain `swift build` would rebuild all of them. Only BackupKit's graph is made,
# not that of Parallel, which it imports but does not export.
DOCC ?= docc
DOCS := .build/docs
SYMBOL_GRAPHS := .build/symbol-graphs
docs:
	$(SWIFT) build --target BackupKit
	rm -rf $(SYMBOL_GRAPHS) $(DOCS)
	mkdir -p $(SYMBOL_GRAPHS)
	$(SWIFT) symbolgraph-extract -module-name BackupKit -minimum-access-level public \
		-target "$$($(SWIFT) -print-target-info | sed -n 's/.*"triple": "\(.*\)",/\1/p' | head -n 1)" \
		-I "$$($(SWIFT) build --show-bin-path)/Modules" -output-dir $(SYMBOL_GRAPHS)
	$(DOCC) convert Sources/BackupKit/BackupKit.docc --additional-symbol-graph-dir $(SYMBOL_GRAPHS) \
		--fallback-display-name BackupKit --fallback-bundle-identifier cloudbackup.BackupKit \
		--transform-for-static-hosting --warnings-as-errors --output-path $(DOCS)

# The suites that share memory across threads (two-core reads, merges and writes, and the
# thread they run on), under ThreadSanitizer. Not part of `make test`: a second full build
# of its own (.build/tsan, so the usual one is not rebuilt) and minutes more.
SANITIZED := ConcurrentlyTests|StreamedWriteTests|TwoCoreReadTests|TwoCoreMergeTests
sanitize: deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build/tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build/tsan --filter '$(SANITIZED)'

# libFuzzer over BackupKit (Tests/Fuzz: read → validate → migrate → write → read back, and
# merge(a, a) / merge(a, b)) under AddressSanitizer, for FUZZ_SECONDS. Built by swiftc, not
# SwiftPM, so no sanitizer flag reaches the normal build or `make test`. Seeded from
# Examples/ (each file, and pairs joined by a NUL byte); the corpus grows in .build/fuzz/corpus
# and a crash's input is written to .build/fuzz/crash-*. Not part of `make test`. Swift's own
# backtracer is off: after a broken property it would run under ASan, and libFuzzer reports.
FUZZ_SECONDS ?= 300
FUZZ := .build/fuzz
FUZZ_FLAGS := -sanitize=fuzzer,address -parse-as-library -O -g
FUZZ_KIT := $(shell find Sources/BackupKit -name '*.swift')
FUZZ_PARALLEL := $(shell find Sources/Parallel -name '*.swift')
$(FUZZ)/backupkit-fuzz: $(FUZZ_KIT) $(FUZZ_PARALLEL) Tests/Fuzz/BackupKitFuzz.swift
	mkdir -p $(FUZZ)
	swiftc $(FUZZ_FLAGS) -module-name Parallel -emit-module \
		-emit-module-path $(FUZZ)/Parallel.swiftmodule -emit-library -static \
		-o $(FUZZ)/libParallel.a $(FUZZ_PARALLEL)
	swiftc $(FUZZ_FLAGS) -I $(FUZZ) -module-name BackupKit -emit-module \
		-emit-module-path $(FUZZ)/BackupKit.swiftmodule -emit-library -static \
		-o $(FUZZ)/libBackupKit.a $(FUZZ_KIT)
	swiftc $(FUZZ_FLAGS) -I $(FUZZ) Tests/Fuzz/BackupKitFuzz.swift $(FUZZ)/libBackupKit.a \
		$(FUZZ)/libParallel.a -o $(FUZZ)/backupkit-fuzz

fuzz: $(FUZZ)/backupkit-fuzz
	mkdir -p $(FUZZ)/corpus
	cp Examples/*.json Examples/invalid/*.json $(FUZZ)/corpus/
	for a in phone laptop old-v1; do for b in phone laptop old-v2; do \
		{ cat Examples/$$a.json; printf '\0'; cat Examples/$$b.json; } > $(FUZZ)/corpus/pair-$$a-$$b; \
	done; done
	SWIFT_BACKTRACE=enable=no $(FUZZ)/backupkit-fuzz -max_total_time=$(FUZZ_SECONDS) \
		-print_final_stats=1 -artifact_prefix=$(FUZZ)/ $(FUZZ)/corpus

# What users run (cloudbackup validate, migrate, merge) as whole cold processes beside whole
# Python processes parsing the same seeded files (orjson, pysimdjson), then BackupKit in one
# warm process beside its peers (Python json, orjson, jq, Foundation; gzip beside zlib's
# compress2); the files are cached in .build/bench-data; jq and GNU time (for peak memory)
# come from apt-get when missing. BENCH_SIZES=20000,200000 skips the slow top size. Then what a
# backup costs (requests and bytes from the emulator's log, the process's CPU and wall time)
# for Examples/phone.json, the 20,000 file and (when BENCH_SIZES made it) the 1,000,000 one,
# plain, compressed and encrypted. Last, every pass a one-change backup of the 20,000 file
# makes over the document, and the first and second unchanged nights, counted by callgrind
# (Tests/Bench/passes.py; valgrind comes from apt-get too).
bench: deps venv
	@$(call apt_install,jq time valgrind)
	$(RELEASE) --product backup-bench
	$(RELEASE) --product cloudbackup
	$(PYTHON) Tests/Bench/bench.py --bin .build/release/backup-bench --cli $(BIN)
	$(PYTHON) Tests/Bench/requests.py --bin $(BIN) Examples/phone.json \
		.build/bench-data/seed$${BENCH_SEED:-42}-20000/phone.json \
		.build/bench-data/seed$${BENCH_SEED:-42}-1000000/phone.json
	$(PYTHON) Tests/Bench/passes.py --bin $(BIN) --bench .build/release/backup-bench .build/bench-data/seed$${BENCH_SEED:-42}-20000/phone.json

# Devices editing and backing up at once through faults, under every reading of Drive's
# If-Match, checked after every round (Tests/Soak/soak.py); `make test` runs 100 rounds of it.
# Drive's limits are set low (20 pins per file, 10 unpinned revisions, 6 hours' age, 30-minute
# tokens) and its clock runs an hour a round on average, so 1,500 rounds span 62 days: every
# run must cross each limit (--require-limits) and lose nothing. One run per seed of
# SOAK_SEEDS, one after another; every seed runs, and any failing fails the target.
# SOAK_ROUNDS, SOAK_DEVICES and SOAK_SEEDS (or one SOAK_SEED) change the runs; the same seed,
# the same edits. SOAK_FLAGS passes more (--keep, --stop-at-first-loss, --pin-cap N, ...).
SOAK_ROUNDS ?= 1500
SOAK_DEVICES ?= 5
SOAK_SEEDS ?= $(if $(SOAK_SEED),$(SOAK_SEED),31 7 101 5)
SOAK_FLAGS :=
soak: build venv
	@failed=; for seed in $(SOAK_SEEDS); do \
		$(PYTHON) Tests/Soak/soak.py --bin $(BIN) --rounds $(SOAK_ROUNDS) \
			--devices $(SOAK_DEVICES) --seed $$seed --require-limits $(SOAK_FLAGS) \
			|| failed="$$failed $$seed"; \
	done; \
	if [ -n "$$failed" ]; then echo "make soak: failed for seed(s)$$failed"; exit 1; fi

# The emulator and the stand-in browser need only Python's standard library: no venv, so
# the demo needs nothing from PyPI.
# The release build comes first and takes minutes on a fresh clone; say so before it starts.
demo:
	@echo "make demo: building cloudbackup first (a release build: minutes on a fresh clone, seconds after)"
	@$(MAKE) --no-print-directory build
	BIN=$(abspath $(BIN)) bash Examples/demo.sh

clean:
	rm -rf .build $(VENV)
