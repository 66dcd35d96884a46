#!/bin/sh
# Install the Debian packages a make target needs and no more:
#   deps.sh build   the compiler, pkg-config and the five libraries (make)
#   deps.sh test    + cmocka, Python 3 with PyYAML and jsonschema, curl, jq,
#                   openssl, chromium and a font (make test)
#   deps.sh bench   + wrk (make bench)
# As root it runs apt-get; otherwise it prints the command.  With
# DEPS_DRY_RUN=1 it only prints what is missing ("missing: ..." or
# "nothing missing").  PKG_CONFIG names the pkg-config to ask.
set -eu
level=${1:-build}
pc=${PKG_CONFIG:-pkg-config}
missing=""

need_pkg() {	# pkg-config module, Debian package
	if ! command -v "$pc" >/dev/null 2>&1 || ! "$pc" --exists "$1" 2>/dev/null; then
		missing="$missing $2"
	fi
}

command -v cc >/dev/null 2>&1 || missing="$missing build-essential"
command -v "$pc" >/dev/null 2>&1 || missing="$missing pkg-config"
need_pkg yaml-0.1 libyaml-dev
need_pkg jansson libjansson-dev
need_pkg libmicrohttpd libmicrohttpd-dev
need_pkg sqlite3 libsqlite3-dev
need_pkg gnutls libgnutls28-dev
case $level in
test|bench)
	need_pkg cmocka libcmocka-dev
	python3 -c 'import yaml, jsonschema' 2>/dev/null ||
		missing="$missing python3 python3-yaml python3-jsonschema"
	# tests/security.py: the CI shell example, TLS certificates
	for c in curl jq openssl; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	# tests/ui_browser.py: Debian's Chromium, driven over its DevTools
	# pipe (no driver, no browser download), and a font for screenshots
	command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
	[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] ||
		missing="$missing fonts-dejavu-core"
	;;
esac
case $level in
bench) command -v wrk >/dev/null 2>&1 || missing="$missing wrk" ;;
esac

if [ -z "$missing" ]; then
	[ "${DEPS_DRY_RUN:-}" = 1 ] && echo "nothing missing"
	exit 0
fi
if [ "${DEPS_DRY_RUN:-}" = 1 ]; then
	echo "missing:$missing"
	exit 0
fi
if [ "$(id -u)" = 0 ]; then
	echo "make deps ($level): installing$missing"
	apt-get update -qq
	# shellcheck disable=SC2086 # one word per package
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends $missing
else
	echo "make deps ($level): missing packages; run:"
	echo "  sudo apt-get install -y$missing"
	exit 1
fi
