#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# call-graph.sh [BUILDDIR]: the calls between the files of src/, read from
# the objects of a build (nm): fails, naming each, on a call from a layer
# to one above it (lib < model < source < image < populate < layout <
# api, cli: doc/architecture.md) and on calls between files that form a
# cycle (a file that calls one that, through others, calls it back: one
# job split across files, or a piece in the wrong one).  The folders'
# includes are code-shape.sh's.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=${1:-$top/_build}
objs=$(find "$b/src" -name 'liborlov_a-*.o' | sort)
[ -n "$objs" ] || { echo "call-graph: no objects of liborlov in $b/src (build first)" >&2; exit 2; }
report=$(for o in $objs; do
	rel=${o#"$b"/src/}
	f=$(dirname "$rel")/$(basename "$rel" .o | sed 's/^liborlov_a-//').c
	nm -P "$o" | awk -v f="$f" '$2 == "U" { print "U", f, $1; next }
		$2 ~ /^[TDBR]$/ { print "D", f, $1 }'
done | awk '
function rank(file,   l) {
	l = file; sub(/\/.*/, "", l)
	if (l == "lib") return 0; if (l == "model") return 1
	if (l == "source") return 2; if (l == "image") return 3
	if (l == "populate") return 4; if (l == "layout") return 5
	return 6
}
$1 == "D" { def[$3] = $2; files[$2] = 1; next }
{ use[NR] = $2 " " $3 }
END {
	bad = 0
	for (i in use) {
		split(use[i], u, " ")
		g = def[u[2]]
		if (g == "" || g == u[1]) continue
		k = u[1] SUBSEP g
		if (!(k in edge)) { edge[k] = u[2]; out[u[1]]++; inn[g]++ }
		else if (index(" " edge[k] " ", " " u[2] " ") == 0) edge[k] = edge[k] " " u[2]
		if (rank(g) > rank(u[1]) && !((u[1], g) in up)) {
			up[u[1], g] = 1
			printf "call-graph: %s calls %s of %s, a layer above it\n", u[1], u[2], g
			bad = 1
		}
	}
	# peel files no cycle passes through: those that call no file left,
	# or that no file left calls; what stays is on a cycle or between two
	do {
		changed = 0
		for (f in files) {
			if (f in gone) continue
			if (!out[f] || !inn[f]) {
				gone[f] = 1; changed = 1
				for (k in edge) {
					split(k, e, SUBSEP)
					if (e[1] == f && !(e[2] in gone)) inn[e[2]]--
					if (e[2] == f && !(e[1] in gone)) out[e[1]]--
				}
			}
		}
	} while (changed)
	for (k in edge) {
		split(k, e, SUBSEP)
		if (!(e[1] in gone) && !(e[2] in gone)) {
			printf "call-graph: %s calls %s (%s): on a cycle of calls between files\n", e[1], e[2], edge[k]
			bad = 1
		}
	}
}' | sort)
[ -z "$report" ] && exit 0
echo "$report"
exit 1
