#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# code-shape.sh [SRCDIR]: the shape src/ keeps (doc/architecture.md, "Code map").
# Fails, naming each offender, when a file is over 800 lines, a function
# over 100, a .c file includes anything before "config.h", or a layer
# includes a header of a layer above it:
#   lib <- model <- source <- image <- populate <- layout <- cli
# (model may use lib only; image.h may name model/ headers only through
# image/bridge.h; image/ includes no source/ header).  Functions are found
# as the project writes them: the definition's closing brace alone in
# column 0.  Also when src/ reads an ORLOV_* environment variable not in
# its list (env_ok below).
set -eu
src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}
max_file=${CODE_SHAPE_MAX_FILE:-800}
max_func=${CODE_SHAPE_MAX_FUNC:-100}
bad=0
for f in $(find "$src" -name '*.[ch]' | sort); do
	rel=${f#"$src"/}
	n=$(wc -l <"$f")
	if [ "$n" -gt "$max_file" ]; then
		echo "code-shape: $rel: $n lines (limit $max_file)"
		bad=1
	fi
	# a function body: from a line "{" in column 0 after a line with "(",
	# to the next "}" in column 0
	awk -v rel="$rel" -v max="$max_func" '
		/^\{/ && prev ~ /\)/ { start = NR; name = head; next }
		{ if ($0 ~ /^[A-Za-z_].*\(/) head = $0 }
		/^\}/ && start { len = NR - start - 1
			if (len > max) { sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
				printf "code-shape: %s:%d: %s(): %d lines (limit %d)\n", rel, start, name, len, max; bad = 1 }
			start = 0 }
		{ prev = $0 }
		END { exit bad }' "$f" || bad=1
done
# layering: a folder may include headers of its own folder and of the
# folders below it only; a layer is the first folder under src/, so
# model/ext2/ and model/ext4/ are the model
rank() {
	case $1 in
	lib) echo 0 ;; model) echo 1 ;; source) echo 2 ;; image) echo 3 ;;
	populate) echo 4 ;; layout) echo 5 ;; cli) echo 6 ;; *) echo 9 ;;
	esac
}
for f in $(find "$src" -mindepth 2 -name '*.[ch]' | sort); do
	rel=${f#"$src"/}
	layer=${rel%%/*}
	r=$(rank "$layer")
	for inc in $(sed -n 's|^#include "\([a-z_]*\)/[^"]*".*|\1|p' "$f" | sort -u); do
		ri=$(rank "$inc")
		if [ "$ri" -gt "$r" ]; then
			echo "code-shape: $rel: $layer/ includes $inc/ (a layer above it)"
			bad=1
		fi
	done
done
# the image layer reads images, not sources: what both speak of (a file's
# identity, the order of names) is in lib/names.h
for f in $(find "$src/image" -name '*.[ch]' 2>/dev/null | sort); do
	if grep -q '^#include "source/' "$f"; then
		echo "code-shape: ${f#"$src"/}: includes a source/ header (shared types go in lib/)"
		bad=1
	fi
done
# the image layer's interface names the model only through its bridge
for f in $(find "$src/image" -name '*.h' ! -name bridge.h 2>/dev/null | sort); do
	if grep -q '^#include "model/' "$f"; then
		echo "code-shape: ${f#"$src"/}: includes a model/ header (only image/bridge.h may)"
		bad=1
	fi
done
# config.h before any other header, in every .c file of src/ and in the
# tests' that include it: it sets _FILE_OFFSET_BITS, and a system header
# read before it gives a 32-bit build another struct stat than the one
# source/walk.c fills
tests=$(cd "$src/.." && pwd)/tests
for f in $(find "$src" "$tests" -name '*.c' 2>/dev/null | sort); do
	case $f in
	"$tests"/*) grep -q '^#include "config.h"' "$f" || continue ;;
	esac
	first=$(sed -n 's/^#[ 	]*include[ 	]*\([<"][^>"]*[>"]\).*/\1/p' "$f" | head -n 1)
	if [ "$first" != '"config.h"' ]; then
		echo "code-shape: ${f#"${src%/*}"/}: includes ${first:-nothing} before \"config.h\""
		bad=1
	fi
done
# the environment variables named ORLOV_* that shipped code reads: the
# documented ORLOV_MKFS_OPTIONS only.  A test hook (ORLOV_FAULT, ...) is
# read inside #ifdef ORLOV_TEST_HOOKS, compiled into the tests' build
# alone (tests/orlov-populate-hooks); anywhere else it fails here.
env_ok=' ORLOV_MKFS_OPTIONS '
for f in $(grep -rlE 'getenv[ 	]*\([ 	]*"ORLOV_' "$src" | sort); do
	for hit in $(awk '
		# the #if nesting: h inside #ifdef ORLOV_TEST_HOOKS, n in
		# its #else (or #ifndef), o any other condition
		/^[ \t]*#[ \t]*if/ {
			c = "o"
			if ($0 ~ /^[ \t]*#[ \t]*ifdef[ \t]+ORLOV_TEST_HOOKS/ ||
			    $0 ~ /^[ \t]*#[ \t]*if[ \t]+defined[ \t]*\(?[ \t]*ORLOV_TEST_HOOKS[ \t]*\)?[ \t]*$/)
				c = "h"
			else if ($0 ~ /^[ \t]*#[ \t]*ifndef[ \t]+ORLOV_TEST_HOOKS/)
				c = "n"
			st[++d] = c
		}
		/^[ \t]*#[ \t]*elif/ { st[d] = "o" }
		/^[ \t]*#[ \t]*else/ { st[d] = st[d] == "h" ? "n" : st[d] == "n" ? "h" : "o" }
		/^[ \t]*#[ \t]*endif/ { d-- }
		{
			line = $0
			while (match(line, /getenv[ \t]*\([ \t]*"ORLOV_[A-Za-z0-9_]*"/)) {
				v = substr(line, RSTART, RLENGTH)
				line = substr(line, RSTART + RLENGTH)
				sub(/^[^"]*"/, "", v)
				sub(/"$/, "", v)
				hook = 0
				for (i = 1; i <= d; i++)
					if (st[i] == "h")
						hook = 1
				if (!hook)
					print FNR ":" v
			}
		}' "$f"); do
		case $env_ok in
		*" ${hit##*:} "*) ;;
		*) echo "code-shape: ${f#"$src"/}:${hit%:*}: reads ${hit##*:} outside #ifdef ORLOV_TEST_HOOKS (a test hook belongs in the test build)"
		   bad=1 ;;
		esac
	done
done
# the model does no I/O: no libext2fs call that reads or writes an image
if grep -rnE --include='*.[ch]' \
	'\b(ext2fs_(read|write|open|close|flush)[a-z_0-9]*|io_channel_[a-z_]+)\(' \
	"$src"/model 2>/dev/null | sed 's|^|code-shape: model does I/O: |' | grep .; then
	bad=1
fi
# the engine and what is below it print nothing: what a run tells goes to
# the caller (populate_events, populate_result), the programs print it
# (cli/); io_guard's count is the fault-injection tests' own (their build)
if grep -rnE --include='*.[ch]' \
	'(\b(printf|puts|putchar)\(|\b(fprintf|fputs|fputc|putc|fwrite|fput_escaped|fput_json)\((stdout|stderr))' \
	"$src"/lib "$src"/model "$src"/source "$src"/image "$src"/populate 2>/dev/null |
	grep -v '^[^:]*/image/io_guard\.c:' |
	sed "s|^$src/|code-shape: prints (only cli/ does): |" | grep .; then
	bad=1
fi
exit $bad
