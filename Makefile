# Thin wrapper around CMake and the project scripts. The two commands of the
# README: `make demo` (set up, then use tabletalk on the sample database) and
# `make test` (set up, then run every test). `make check` is the developer's
# quick loop: the release tree with tests, the unit and agent labels only.
# `make bench` runs the benchmark suite against its peers (bench/run.py; not
# part of `make test`): BENCH_ARGS passes options, e.g. --quick or a part.
MAKEFLAGS += --no-print-directory
PREFIX ?= /usr/local
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo test check bench install clean data deps llama

all: build

deps:
	@scripts/deps.sh build

data:
	@scripts/fetch-data.sh

llama:
	@scripts/fetch-llama.sh

build: deps llama
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build data
	@scripts/demo.sh $(BUILD)/tabletalk

test:
	@scripts/test.sh

check:
	@scripts/test.sh check

bench: build data
	@python3 bench/run.py --bin $(BUILD)/tabletalk --data $(BUILD)/bench $(BENCH_ARGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan
