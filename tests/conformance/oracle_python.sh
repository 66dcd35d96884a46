#!/bin/sh
# Print a python3 that can run ../shared/tools/axolotl-oracle (pydantic 2.x,
# PyYAML; packaging is optional), installing what is missing when run as
# root on Debian.  Usage: oracle_python.sh BUILD_DIR
#
# Debian 13 (trixie) packages pydantic 2 (python3-pydantic).  Debian 12
# (bookworm) packages pydantic 1.10, which the oracle cannot use: there the
# script makes a virtual environment in BUILD_DIR/oracle-venv and installs
# pydantic 2 into it with pip.
set -eu
build=${1:-build}

ok() {
	"$1" -c 'import pydantic, yaml, sys
sys.exit(0 if pydantic.VERSION.split(".")[0] == "2" else 1)' 2>/dev/null
}

# The PATH's python3 first, then Debian's, a pyenv or /usr/local install
# (a CI runner's PATH may not have the login shell's shims), then ours.
for p in python3 /usr/bin/python3 /usr/local/bin/python3 \
    "${PYENV_ROOT:-${HOME:-/root}/.pyenv}"/versions/*/bin/python3 \
    "$build/oracle-venv/bin/python3"; do
	if command -v "$p" >/dev/null 2>&1 && ok "$p"; then
		command -v "$p"
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	echo "oracle_python.sh: no python3 with pydantic 2 and PyYAML; run as" \
	    "root, or: python3 -m venv $build/oracle-venv &&" \
	    "$build/oracle-venv/bin/pip install 'pydantic>=2.12,<3' pyyaml" \
	    "packaging" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
cand=$(apt-cache policy python3-pydantic | awk '/Candidate:/ { print $2 }')
case "$cand" in
2.*)
	apt-get install -y -qq --no-install-recommends python3 python3-yaml \
	    python3-pydantic python3-packaging >&2
	ok /usr/bin/python3 && { echo /usr/bin/python3; exit 0; }
	;;
esac
echo "oracle_python.sh: Debian's python3-pydantic is ${cand:-missing}, not" \
    "2.x; installing pydantic 2 with pip into $build/oracle-venv" >&2
apt-get install -y -qq --no-install-recommends python3 python3-venv \
    python3-yaml >&2
python3 -m venv --system-site-packages "$build/oracle-venv" >&2
"$build/oracle-venv/bin/pip" install -q 'pydantic>=2.12,<3' pyyaml \
    packaging >&2
ok "$build/oracle-venv/bin/python3"
echo "$build/oracle-venv/bin/python3"
