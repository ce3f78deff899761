# commitlab -- the front door.  `make demo` builds everything and runs the
# tour; `make test` builds and runs every test.  Both install the Debian
# packages they need when run as root, and otherwise print the apt-get line.

BUILD    ?= build
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEB_PACKAGES := build-essential cmake pkg-config liblmdb-dev liburing-dev check libjansson-dev librocksdb-dev libsqlite3-dev libwiredtiger-dev postgresql libpq-dev e2fsprogs xfsprogs btrfs-progs python3 clang clang-format libclang-rt-14-dev
FUZZ_SECONDS ?= 60

.PHONY: all deps build demo test test-long test-asan test-tsan test-tsan-concurrency fuzz example install clean

all: build

deps:
	@./scripts/deps.sh $(DEB_PACKAGES)
	@# zfs-fuse (userspace ZFS, for `matrix --fs zfs` and its test) only
	@# where it can run: as root, with /dev/fuse; elsewhere that test skips
	@if [ "$$(id -u)" -eq 0 ] && [ -c /dev/fuse ]; then \
		./scripts/deps.sh zfs-fuse || echo "deps: zfs-fuse not installed: the ZFS tests will be skipped"; fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/commitlab tour

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory example
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=10

# The same suites with every crash and corruption loop 8 times longer
# (CL_TEST_SCALE): the long campaigns `make test` samples.
test-long: build
	cd $(BUILD) && CL_TEST_SCALE=8 ctest --output-on-failure -j $(JOBS) --timeout 7200

# The libFuzzer targets (tests/fuzz), FUZZ_SECONDS each, from a corpus of
# real files; `make test` runs them for 10 s each.
fuzz: build
	./scripts/fuzz.sh $(BUILD) $(BUILD)-fuzz $(FUZZ_SECONDS)

# The suites under AddressSanitizer+UBSan and under ThreadSanitizer.
test-asan: deps
	cmake -S . -B $(BUILD)-asan -DCL_SANITIZE=address -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ctest --output-on-failure -j $(JOBS)

test-tsan: deps
	cmake -S . -B $(BUILD)-tsan -DCL_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD)-tsan -j $(JOBS)
	cd $(BUILD)-tsan && ctest --output-on-failure -j $(JOBS) $(TSAN_TESTS)

# The suites where threads meet (the WAL's and the library's asynchronous
# commits, concurrency, isolation, sharing, io_uring, the drivers) under
# ThreadSanitizer: a few minutes, where the whole of test-tsan takes about
# a quarter of an hour.  CI runs it.
test-tsan-concurrency:
	$(MAKE) test-tsan TSAN_TESTS='-R "^(wal/check_async|wal/check_uring|engine/check_async|engine/check_concurrency|engine/check_isolation|engine/check_sharing|bench/check_drivers)"'

# The embedding example, built against an installed copy through pkg-config.
example: build
	./scripts/example.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
