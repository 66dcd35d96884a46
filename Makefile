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

CORE_SRC   = $(wildcard core/*.c)
API_SRC    = $(wildcard api/*.c)
SERVER_SRC = $(filter-out server/main.c,$(wildcard server/*.c))
LIB_OBJ    = $(patsubst %.c,$(B)/%.o,$(CORE_SRC) $(API_SRC) $(SERVER_SRC)) \
             $(B)/gen/migrations.o $(B)/gen/tables.o
MIGRATIONS = $(sort $(wildcard migrations/[0-9][0-9][0-9][0-9]_*.sql))
TESTS      = $(patsubst tests/%.c,%,$(wildcard tests/test_*.c))
TEST_BINS  = $(addprefix $(B)/tests/,$(TESTS))

.PHONY: all deps test run-tests lint clean run docs bench fuzz
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

$(B)/tests/test_%: $(B)/tests/test_%.o $(B)/tests/fixture.o $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_LIBS)

SANFLAGS = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all \
	   -fno-omit-frame-pointer

# pkg-config runs when make reads this file, so everything built after
# `deps` installs packages happens in a sub-make that sees them.
test: deps
	@$(MAKE) --no-print-directory build/preflight
	@$(MAKE) --no-print-directory B=build/san OPT="-O1 -g -DARENA_DEBUG" SAN="$(SANFLAGS)" \
	    run-tests

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
	$(PYTHON) tests/crash_recovery.py $(B)/preflight $(SHARED) 3; \
	if [ -x build/preflight ]; then \
		echo "== hostile inputs, release binary (1 s hang guard)"; \
		PREFLIGHT_BIN=build/preflight HOSTILE_MAX_MS=1000 \
		    $(B)/tests/test_hostile; fi; \
	echo "== all test suites passed"

# docs/rules.md is generated from the rule table, so it never drifts;
# test_cli checks that the committed file is current.
docs: all
	$(B)/preflight rules --format markdown > docs/rules.md

# Timings are measurements, not test assertions: they live here.
CORPUS = $(shell find $(SHARED)/corpus/axolotl/examples -name '*.y*ml' 2>/dev/null | sort)
bench: all
	@$(MAKE) --no-print-directory build/bench/core_bench build/tests/test_hostile
	@echo "== core: every example config, 10 passes"
	@build/bench/core_bench 10 $(CORPUS)
	@echo "== CLI cold start"
	@python3 tests/bench/cold_start.py build/preflight \
	    $(SHARED)/corpus/axolotl/examples/llama-3/qlora-fsdp-70b.yaml
	@echo "== hostile inputs through the release binary, 100 ms each"
	@PREFLIGHT_BIN=build/preflight HOSTILE_MAX_MS=100 SHARED_DIR=$(SHARED) \
	    build/tests/test_hostile | grep -E ' ms |PASSED|FAILED'

build/bench/core_bench: tests/bench/core_bench.c build/tests/fixture.o $(patsubst %.c,build/%.o,$(CORE_SRC) $(API_SRC)) build/gen/tables.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSHARED_DIR='"$(SHARED)"' -DBUILD_DIR='"build"' -o $@ $^ $(LDLIBS)

run: all
	@mkdir -p data
	$(B)/preflight serve --listen 127.0.0.1:8080 --db data/preflight.db

BANNED = strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atof|strtok|alloca
lint:
	@if grep -nE '(^|[^_a-z])($(BANNED))\(' core/*.c api/*.c server/*.c \
	    tests/*.c; then echo "lint: banned function"; exit 1; fi
	@if grep -nE '#include <(sqlite3|microhttpd|jansson|unistd|pthread|gnutls/[a-z]+|stdio)\.h>' \
	    core/*.h; then echo "lint: core headers must not pull I/O or service libraries"; exit 1; fi
	@if grep -nE '#include <(sqlite3|microhttpd|jansson|unistd|pthread|gnutls/[a-z]+)\.h>' \
	    core/*.c; then echo "lint: core/ is pure"; exit 1; fi
	@if grep -nE '\<(fopen|fread|fwrite|printf|fprintf|puts|fputs|getenv|time|clock_gettime|rand|open|read|write)\(' \
	    core/*.c; then echo "lint: core/ does no I/O, no clock, no env"; exit 1; fi
	@if grep -nE '#include <(sqlite3|microhttpd)\.h>' api/*.c api/*.h; \
	    then echo "lint: api/ has no sockets and no SQL"; exit 1; fi
	@if grep -nE '#ifn?def|#if ' core/*.c api/*.c server/*.c | \
	    grep -v ARENA_DEBUG; then echo "lint: no #ifdef in .c files"; \
	    exit 1; fi
	@echo "lint: ok"

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# libFuzzer on the whole check (tests/fuzz/fuzz_check.c) with ASan and
# UBSan; seeds are the Axolotl examples and the rule fixtures.  Crashes
# land in build/fuzz/ as crash-*; each becomes a regression test.
FUZZ_SECONDS ?= 60
FUZZ_SRC = tests/fuzz/fuzz_check.c $(CORE_SRC) api/encode.c api/jsonw.c
fuzz: build/gen/tables.c
	@mkdir -p build/fuzz/corpus
	clang -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -I. -Ibuild/gen $(PKG_CFLAGS) -o build/fuzz/fuzz_check \
	    $(FUZZ_SRC) build/gen/tables.c $(PKG_LIBS) -lm
	@awk -F'\t' '$$1 !~ /^#/ && $$1 != "key" { print "\"" $$1 ":\"" }' \
	    core/data/axolotl-keys.tsv > build/fuzz/keys.dict
	@for f in $(CORPUS) tests/fixtures/rules/*.yaml; do \
	    { printf '\001'; cat $$f; } > build/fuzz/corpus/$$(echo $$f | md5sum | cut -c1-16); done
	build/fuzz/fuzz_check -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	    -timeout=10 -rss_limit_mb=2048 -artifact_prefix=build/fuzz/ \
	    -dict=build/fuzz/keys.dict build/fuzz/corpus 2>&1 | tail -20

