# The two commands a fresh machine needs: `make demo` and `make test`.
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all setup build test demo bench clean sanitize fuzz

# ccache when installed, keyed on paths relative to the repository so that
# worktrees and CI checkouts share hits. Decided when a recipe configures,
# after `setup` has installed it: decided when make reads this file, a fresh
# machine's `make demo` configured without it and the `make test` after it
# with it, and the changed launcher rebuilt everything.
CCACHE_FLAGS = $$(command -v ccache >/dev/null 2>&1 && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

# The sanitizer run (docs/fuzzing.md): the HTTP and request tests of
# test_server without the model-driven end-to-end suites (they run in `make
# test`; under ASan they would take most of the CI budget), the template
# engine's tests, and every fuzz target for FUZZ_SECONDS from its corpus.
SANITIZE_SERVER_FILTER ?= -*EndToEnd*:NodeClients.*:CachePage.*:CachePageBrowser.*:CacheReuse.*:CliServe.*:Replicas.*:TokenConstraintTest.RandomSamplingAlwaysYieldsValidCalls:TokenConstraintTest.TrieWalkMatchesBruteForce
SANITIZE_TEXT_FILTER ?= Jinja*:ChatTemplate*-JinjaErrors.MutatedRealTemplatesNeverCrash:ChatTemplate.AnchorPrefixIsSharedByEveryConversation
FUZZ_SECONDS ?= 20
FUZZ_SEED ?= 1
export ASAN_OPTIONS ?= detect_leaks=1
export UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1

all: build

setup:
	@scripts/setup

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CCACHE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

demo: build
	@scripts/demo $(BUILD)/lineage

bench: build
	@scripts/bench $(BUILD)

sanitize: setup
	@cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLINEAGE_SANITIZE=ON $(CCACHE_FLAGS) >/dev/null
	@cmake --build build-asan -j $(JOBS) --target test_server test_text fuzz_runner lineage
	@build-asan/test_server --gtest_filter='$(SANITIZE_SERVER_FILTER)' --gtest_brief=1
	@build-asan/test_text --gtest_filter='$(SANITIZE_TEXT_FILTER)' --gtest_brief=1
	@scripts/fuzz build-asan/fuzz_runner $(FUZZ_SECONDS) $(FUZZ_SEED) build-asan/fuzz-crashes

# Every fuzz target for FUZZ_SECONDS on the release build (no sanitizers).
fuzz: build
	@scripts/fuzz $(BUILD)/fuzz_runner $(FUZZ_SECONDS) $(FUZZ_SEED) $(BUILD)/fuzz-crashes

clean:
	rm -rf $(BUILD) build-asan
