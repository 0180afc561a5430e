# The two commands a fresh machine needs: `make demo` and `make test`.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all setup build test demo bench clean sanitize

all: build

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

demo: build
	@scripts/demo $(BUILD)/lineage

bench: build
	@scripts/bench $(BUILD)

sanitize: setup
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLINEAGE_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) build-asan
