# preflight: one Makefile (c-style.md section 11).
#   make            build/preflight
#   make test       every test, ASan + UBSan + ARENA_DEBUG (build/san)
#   make lint       banned functions, core/ purity
#   make deps       install missing Debian packages (apt-get as root)
#   make clean
#   make run        build and start the daemon on 127.0.0.1:8080, data/
# Variables: B (build dir), OPT, SAN, CC, SHARED (the shared/ folder).

CC     ?= cc
B      ?= build
OPT    ?= -O2 -g
SAN    ?=
SHARED ?= ../shared
PKGS    = yaml-0.1 jansson libmicrohttpd sqlite3 gnutls
TESTPKGS = cmocka
# The first python3 that has PyYAML and jsonschema (tests only).
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do \
	$$p -c 'import yaml, jsonschema' 2>/dev/null && { echo $$p; exit; }; \
	done; echo python3)

WARN  = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
        -Wmissing-prototypes -Wmissing-declarations -Wpointer-arith \
        -Wwrite-strings -Wformat=2 -Wundef -Wvla -Wconversion \
        -Wcast-qual -Wimplicit-fallthrough -Wnull-dereference
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
TEST_LIBS  = $(shell pkg-config --libs $(TESTPKGS) 2>/dev/null)
CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) \
         $(OPT) $(SAN) -MMD -MP -I. -I$(B)/gen $(PKG_CFLAGS)
LDFLAGS += $(SAN)
LDLIBS = $(PKG_LIBS) -lpthread -lm

CORE_SRC   = $(wildcard core/*.c core/rules/*.c)
API_SRC    = $(wildcard api/*.c)
SERVER_SRC = $(filter-out server/main.c,$(wildcard server/*.c))
LIB_OBJ    = $(patsubst %.c,$(B)/%.o,$(CORE_SRC) $(API_SRC) $(SERVER_SRC)) \
             $(B)/gen/migrations.o $(B)/gen/tables.o
MIGRATIONS = $(sort $(wildcard migrations/[0-9][0-9][0-9][0-9]_*.sql))
TESTS      = $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
TEST_BINS  = $(addprefix $(B)/tests/,$(TESTS))

.PHONY: all deps test run-tests run-bump-tests lint clean run docs bench fuzz fuzz-deps soak \
	conformance
.SECONDARY:

all: deps
	@$(MAKE) --no-print-directory $(B)/preflight

# Debian package names for the pkg-config modules above.
DEB_yaml-0.1 = libyaml-dev
DEB_jansson = libjansson-dev
DEB_libmicrohttpd = libmicrohttpd-dev
DEB_sqlite3 = libsqlite3-dev
DEB_gnutls = libgnutls28-dev
DEB_cmocka = libcmocka-dev

deps:
	@missing=""; \
	command -v pkg-config >/dev/null 2>&1 || missing="pkg-config"; \
	for p in $(PKGS) $(TESTPKGS); do \
		pkg-config --exists $$p 2>/dev/null || case $$p in \
		yaml-0.1) missing="$$missing $(DEB_yaml-0.1)";; \
		jansson) missing="$$missing $(DEB_jansson)";; \
		libmicrohttpd) missing="$$missing $(DEB_libmicrohttpd)";; \
		sqlite3) missing="$$missing $(DEB_sqlite3)";; \
		gnutls) missing="$$missing $(DEB_gnutls)";; \
		cmocka) missing="$$missing $(DEB_cmocka)";; \
		esac; \
	done; \
	python3 -c 'import yaml, jsonschema' 2>/dev/null || \
		missing="$$missing python3 python3-yaml python3-jsonschema"; \
	command -v wrk >/dev/null 2>&1 || missing="$$missing wrk"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "make deps: installing$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			    apt-get install -y -qq --no-install-recommends \
			    $$missing build-essential; \
		else \
			echo "make deps: missing packages; run:"; \
			echo "  sudo apt-get install -y$$missing"; exit 1; \
		fi; \
	fi

$(B)/preflight: $(B)/server/main.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/gen/migrations.c: $(MIGRATIONS) server/embed_sql.sh
	@mkdir -p $(dir $@)
	sh server/embed_sql.sh $(MIGRATIONS) > $@.tmp && mv $@.tmp $@

$(B)/gen/tables.c: core/data/gen_tables.sh $(wildcard core/data/*.tsv)
	@mkdir -p $(dir $@)
	sh core/data/gen_tables.sh core/data > $@.tmp && mv $@.tmp $@

$(B)/gen/%.o: $(B)/gen/%.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSHARED_DIR='"$(SHARED)"' -DBUILD_DIR='"$(B)"' \
	    -c -o $@ $<

$(B)/tests/test_%: $(B)/tests/test_%.o $(B)/tests/fixture.o \
    $(B)/tests/fixture_api.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LIBS)

SANFLAGS = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer

# pkg-config runs when make reads this file, so everything built after
# `deps` installs packages happens in a sub-make that sees them.
test: deps
	@$(MAKE) --no-print-directory build/preflight
	@$(MAKE) --no-print-directory B=build/san OPT="-O1 -g -DARENA_DEBUG" SAN="$(SANFLAGS)" \
	    run-tests
	@$(MAKE) --no-print-directory B=build/sanbump OPT="-O1 -g" SAN="$(SANFLAGS)" \
	    run-bump-tests

# The core suites once more under ASan/UBSan with the release allocator
# (the inline bump path; ARENA_DEBUG gives every object its own malloc).
BUMP_TESTS = $(addprefix $(B)/tests/,test_arena test_doc test_config \
	test_corpus test_rules test_plan test_estimate test_faults)
run-bump-tests: $(B)/preflight $(BUMP_TESTS)
	@set -e; export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    UBSAN_OPTIONS=print_stacktrace=1 PREFLIGHT_BIN=$(B)/preflight \
	    SHARED_DIR=$(SHARED); \
	for t in $(BUMP_TESTS); do echo "== $$t (release allocator)"; $$t; done; \
	echo "== core suites passed with the release allocator"

run-tests: $(B)/preflight $(TEST_BINS)
	@set -e; export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    UBSAN_OPTIONS=print_stacktrace=1 PREFLIGHT_BIN=$(B)/preflight \
	    SHARED_DIR=$(SHARED); \
	for t in $(TEST_BINS); do echo "== $$t"; $$t; done; \
	echo "== tests/report_schema.py"; \
	$(PYTHON) tests/report_schema.py $(B)/preflight $(SHARED); \
	echo "== tests/http_integration.py"; \
	$(PYTHON) tests/http_integration.py $(B)/preflight $(SHARED); \
	echo "== tests/auth_ci.py"; \
	$(PYTHON) tests/auth_ci.py $(B)/preflight $(SHARED); \
	echo "== tests/crash_recovery.py"; \
	$(PYTHON) tests/crash_recovery.py $(B)/preflight $(SHARED) 5; \
	echo "== tests/hostile_http.py"; \
	PREFLIGHT_RSS_LIMIT_MIB=512 $(PYTHON) tests/hostile_http.py \
	    $(B)/preflight $(SHARED); \
	if [ -x build/preflight ]; then \
		echo "== hostile inputs, release binary (1 s hang guard)"; \
		PREFLIGHT_BIN=build/preflight HOSTILE_MAX_MS=1000 \
		    $(B)/tests/test_hostile; \
		echo "== tests/hostile_http.py, release binary (RSS <= 64 MiB)"; \
		$(PYTHON) tests/hostile_http.py build/preflight $(SHARED); fi; \
	echo "== all test suites passed"

# docs/rules.md is generated from the rule table, so it never drifts;
# test_cli checks that the committed file is current.
docs: all
	$(B)/preflight rules --format markdown > docs/rules.md

# Differential test against Axolotl's own validator (issue 14): N seeded
# configs through preflight and ../shared/tools/axolotl-oracle in the same
# context; prints the agreement table and fails on a disagreement that
# docs/compat.md does not document.  The oracle needs pydantic 2
# (tests/conformance/oracle_python.sh finds or installs it).
CONFORMANCE_N ?= 5000
CONFORMANCE_SEED ?= 1
CONFORMANCE_JOBS ?= 2
conformance: all
	@py=$$(sh tests/conformance/oracle_python.sh $(B)) && \
	$$py tests/conformance/run.py --preflight $(B)/preflight \
	    --shared $(SHARED) --n $(CONFORMANCE_N) --seed $(CONFORMANCE_SEED) \
	    --jobs $(CONFORMANCE_JOBS) --out $(B)/conformance

# Timings are measurements, not test assertions: they live here.
CORPUS = $(shell find $(SHARED)/corpus/axolotl/examples -name '*.y*ml' 2>/dev/null | sort)
BENCH_ROWS ?= 100000
bench: deps all
	@$(MAKE) --no-print-directory build/bench/core_bench build/tests/test_hostile
	@echo "== core: every example config, 10 passes"
	@build/bench/core_bench 10 $(CORPUS)
	@echo "== CLI cold start"
	@python3 tests/bench/cold_start.py build/preflight \
	    $(SHARED)/corpus/axolotl/examples/llama-3/qlora-fsdp-70b.yaml
	@echo "== hostile inputs through the release binary, 100 ms each"
	@PREFLIGHT_BIN=build/preflight HOSTILE_MAX_MS=100 SHARED_DIR=$(SHARED) \
	    build/tests/test_hostile | grep -E ' ms |PASSED|FAILED'
	@echo "== time per check against config size"
	@build/bench/core_bench --scale \
	    $(SHARED)/corpus/axolotl/examples/llama-3/qlora-fsdp-70b.yaml
	@echo "== HTTP: wrk against one server (issue #4 point 5, #6 items 3-4)"
	@$(PYTHON) tests/bench/http_bench.py build/preflight \
	    $(SHARED)/corpus/axolotl/examples/llama-3/qlora-fsdp-70b.yaml 5
	@echo "== queries against stored rows (BENCH_ROWS=1000000 for 10^6)"
	@$(PYTHON) tests/bench/store_scale.py build/preflight $(BENCH_ROWS)

build/bench/core_bench: tests/bench/core_bench.c build/tests/fixture.o $(patsubst %.c,build/%.o,$(CORE_SRC) $(API_SRC)) build/gen/tables.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSHARED_DIR='"$(SHARED)"' -DBUILD_DIR='"build"' -o $@ $^ $(LDLIBS)

# Long reliability runs (docs/reliability.md): 50 rounds of SIGKILL under
# concurrent submissions on the sanitizer build, then 10 minutes at 500
# requests/s of mixed reads and writes on the release build.
SOAK_SECONDS ?= 600
soak: deps
	@$(MAKE) --no-print-directory build/preflight
	@$(MAKE) --no-print-directory B=build/san OPT="-O1 -g -DARENA_DEBUG" \
	    SAN="$(SANFLAGS)" build/san/preflight
	$(PYTHON) tests/crash_recovery.py build/san/preflight $(SHARED) 50
	$(PYTHON) tests/soak.py build/preflight $(SHARED) $(SOAK_SECONDS) 500

run: all
	@mkdir -p data
	$(B)/preflight serve --listen 127.0.0.1:8080 --db data/preflight.db

BANNED = strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atof|strtok|alloca
lint:
	@if grep -nE '(^|[^_a-z])($(BANNED))\(' core/*.c core/rules/*.c api/*.c \
	    server/*.c tests/*.c; then echo "lint: banned function"; exit 1; fi
	@if grep -nE '#include <(sqlite3|microhttpd|jansson|unistd|pthread|gnutls/[a-z]+|stdio)\.h>' \
	    core/*.h; then echo "lint: core headers must not pull I/O or service libraries"; exit 1; fi
	@if grep -nE '#include <(sqlite3|microhttpd|jansson|unistd|pthread|gnutls/[a-z]+)\.h>' \
	    core/*.c core/rules/*.c; then echo "lint: core/ is pure"; exit 1; fi
	@if grep -nE '\<(fopen|fread|fwrite|printf|fprintf|puts|fputs|getenv|time|clock_gettime|rand|open|read|write)\(' \
	    core/*.c core/rules/*.c; then echo "lint: core/ does no I/O, no clock, no env"; exit 1; fi
	@if grep -nE '#include <(sqlite3|microhttpd)\.h>' api/*.c api/*.h; \
	    then echo "lint: api/ has no sockets and no SQL"; exit 1; fi
	@if grep -nE '#ifn?def|#if ' core/*.c core/rules/*.c api/*.c server/*.c | \
	    grep -v ARENA_DEBUG; then echo "lint: no #ifdef in .c files"; \
	    exit 1; fi
	@echo "lint: ok"

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# libFuzzer with ASan and UBSan on four targets: the YAML document layer
# (tests/fuzz/fuzz_doc.c) and the whole check (tests/fuzz/fuzz_check.c),
# both seeded with the Axolotl examples and the rule fixtures and given a
# dictionary of Axolotl keys; the JSON request decoder and the router /
# query-string parsers (tests/fuzz/fuzz_api.c, built twice).
# `make fuzz FUZZ_SECONDS=N` runs each for N seconds.  Crashes land in
# build/fuzz/<target>/ as crash-*; each becomes a regression test.
FUZZ_SECONDS ?= 60
FUZZ_CC = clang -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -I. -Ibuild/gen $(PKG_CFLAGS)
FUZZ_RUN = -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048
FUZZ_API_SRC = tests/fuzz/fuzz_api.c tests/fixture_api.c $(CORE_SRC) $(API_SRC) \
	       server/store_sqlite.c build/gen/tables.c build/gen/migrations.c
fuzz-deps:
	@if ! command -v clang >/dev/null 2>&1 || \
	    ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
	    >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			    apt-get install -y -qq --no-install-recommends \
			    clang libclang-rt-dev; \
		else echo "make fuzz: run sudo apt-get install -y clang" \
		    "libclang-rt-dev"; exit 1; fi; \
	fi

fuzz: fuzz-deps build/gen/tables.c build/gen/migrations.c
	@mkdir -p build/fuzz/check/corpus build/fuzz/json/corpus \
	    build/fuzz/route/corpus build/fuzz/doc/corpus
	$(FUZZ_CC) -o build/fuzz/fuzz_check tests/fuzz/fuzz_check.c \
	    $(CORE_SRC) api/encode.c api/jsonw.c build/gen/tables.c \
	    $(PKG_LIBS) -lm
	$(FUZZ_CC) -o build/fuzz/fuzz_doc tests/fuzz/fuzz_doc.c \
	    core/arena.c core/doc.c core/err.c core/scalar.c $(PKG_LIBS) -lm
	$(FUZZ_CC) -DFUZZ_MODE_JSON -o build/fuzz/fuzz_json $(FUZZ_API_SRC) \
	    $(PKG_LIBS) -lpthread -lm
	$(FUZZ_CC) -DFUZZ_MODE_ROUTE -o build/fuzz/fuzz_route $(FUZZ_API_SRC) \
	    $(PKG_LIBS) -lpthread -lm
	@awk -F'\t' '$$1 !~ /^#/ && $$1 != "key" { print "\"" $$1 ":\"" }' \
	    core/data/axolotl-keys.tsv > build/fuzz/keys.dict
	@for f in $(CORPUS) tests/fixtures/rules/*.yaml; do \
	    h=$$(echo $$f | md5sum | cut -c1-16); \
	    { printf '\001'; cat $$f; } > build/fuzz/check/corpus/$$h; \
	    { printf '\000'; cat $$f; } > build/fuzz/doc/corpus/$$h; \
	    $(PYTHON) -c 'import json,sys; sys.stdout.write(chr(2) + json.dumps({"config": open(sys.argv[1]).read(), "context": {"gpus": 8, "gpu": "h100-sxm"}, "name": sys.argv[1][-40:], "labels": {"k": "v"}}))' \
	        $$f > build/fuzz/json/corpus/$$h; done
	@n=0; while IFS= read -r line; do n=$$((n+1)); \
	    { printf '%s\n' "$$line"; cat tests/fixtures/rules/schema.duplicate_key.fail.yaml; } \
	    > build/fuzz/route/corpus/seed$$n; done < tests/fuzz/routes.txt
	@for t in doc check json route; do \
	    echo "== fuzz_$$t ($(FUZZ_SECONDS) s)"; \
	    dict=build/fuzz/keys.dict; [ $$t = json ] && dict=tests/fuzz/json.dict; \
	    [ $$t = route ] && dict=tests/fuzz/route.dict; \
	    build/fuzz/fuzz_$$t $(FUZZ_RUN) -max_len=65536 \
	        -artifact_prefix=build/fuzz/$$t/ -dict=$$dict \
	        build/fuzz/$$t/corpus > build/fuzz/$$t.log 2>&1; rc=$$?; \
	    grep -E '^#[0-9]+.*(DONE|pulse)|^Done' build/fuzz/$$t.log | tail -2; \
	    if [ $$rc -ne 0 ]; then tail -40 build/fuzz/$$t.log; exit $$rc; fi; \
	    done

