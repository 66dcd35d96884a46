#!/bin/sh
# The include arrows (c-style.md section 1): core <- api <- server.  A
# core/ file (core/rules/ too) that includes an api/ or server/ header, or
# an api/ file that includes a server/ header, is an error: each is named
# as file:line.  `make lint` runs it; exit 1 on any.
# Usage: tests/lint_arrows.sh [ROOT]   (default: the current directory)
root=${1:-.}

# arrow DIR PATTERN WHAT: every include in DIR's sources matching PATTERN
arrow() {
	find "$root/$1" -name '*.[ch]' 2>/dev/null | sort | while read -r f; do
		grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($2)" \
		    "$f" | while IFS= read -r hit; do
			echo "${f#"$root"/}:${hit%%:*}: $3: ${hit#*:}"
		done
	done
}

out=$(arrow core '(\.\./)*(api|server)/' \
    "core/ includes api/ or server/ (core <- api <- server)"
    arrow api '(\.\./)*server/' \
    "api/ includes server/ (core <- api <- server)")
if [ -n "$out" ]; then
	echo "$out"
	echo "lint: an include runs the wrong way"
	exit 1
fi
