#!/bin/sh
# The shape of the sources (issue 20): no hand-written .c/.h file in core/,
# api/ or server/ above 800 lines, and no function above 120 lines unless a
# comment right above it says why it must be one piece ("one piece:").
# Functions are found the way c-style.md writes them: the name at column 0
# followed by '(', the body between a '{' and a '}' at column 0.  Each
# offender is named as file:line; `make lint` runs it; exit 1 on any.
# Usage: tests/lint_shape.sh [ROOT]   (default: the current directory)
root=${1:-.}
files=$(find "$root/core" "$root/api" "$root/server" -name '*.[ch]' \
    2>/dev/null | sort)
[ -n "$files" ] || { echo "lint: no sources under $root"; exit 1; }
# shellcheck disable=SC2086
out=$(awk -v root="$root/" '
function long_file() {
	if (lines > 800)
		printf "%s:1: %d lines (> 800)\n", f, lines
}
FNR == 1 { if (NR > 1) long_file(); name = ""; inside = 0; why = 0 }
{ f = FILENAME; sub("^" root, "", f); lines = FNR }
/one piece:/ { why = FNR }
/^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name) }
/^\{/ { start = FNR; inside = 1 }
/^\}/ && inside {
	n = FNR - start + 1
	if (n > 120 && !(why > 0 && start - why < 8))
		printf "%s:%d: function %s is %d lines (> 120)\n", f, start, name, n
	inside = 0
}
END { long_file() }
' $files)
if [ -n "$out" ]; then
	echo "$out"
	echo "lint: split the file or the function (docs/architecture.md)"
	exit 1
fi
