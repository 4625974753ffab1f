#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-corpus-coverage.sh - does the crosscheck corpus (cases.list) exercise
# every inode allocation rule?  No QEMU: for every case, the starting image
# and tree the kernel checks are built exactly as crosscheck.sh builds them
# and orlov-populate runs with --trace (doc/trace-format.md) in the three
# configurations the kernel checks use:
#
#   stock     --policy orlov    --target /t/u   (crosscheck.sh; heavy cases too)
#   oldalloc  --policy oldalloc --target /t/u   (t-crosscheck-oldalloc.sh)
#   toplevel  --policy orlov    --target /      (t-crosscheck-toplevel.sh)
#
# Then every inode branch must occur at least once: orlov-top, orlov-near,
# orlov-fallback, other-parent, other-hash, other-linear, and dir (oldalloc);
# and some orlov-near decisions must have left the parent's group (group !=
# pgroup: the parent's group was skipped by a limit).  Prints the per-branch
# counts per configuration and per case.
#
# Usage: tests/kernel/t-corpus-coverage.sh [--cases FILE] [--keep DIR]
# Exit: 0 pass, 1 fail, 77 tool not built.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cases=$kt_here/cases.list
keep=
while [ $# -gt 0 ]; do
	case $1 in
	--cases) cases=$2; shift ;;
	--keep) keep=$2; shift ;;
	-h|--help) sed -n '3,23p' "$0"; exit 0 ;;
	*) kt_die "unknown argument $1" ;;
	esac
	shift
done
tool=${ORLOV_POPULATE:-$top_builddir/src/orlov-populate}
[ -x "$tool" ] || kt_skip "orlov-populate not built ($tool)"
for c in mke2fs debugfs e2fsck; do
	command -v $c >/dev/null || kt_skip "$c missing (e2fsprogs)"
done
gentree=$(kt_gentree) || exit 1
if [ -n "$keep" ]; then
	rm -rf "$keep"; mkdir -p "$keep"; work=$(cd "$keep" && pwd)
else
	work=$(kt_tmpdir)
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/src" "$work/img" "$work/trace" "$work/log"

kt_read_cases "$cases" "" yes
ncases=${#names[@]}
[ "$ncases" -gt 0 ] || kt_die "no cases in $cases"
heavy_of() { grep -Eq "^$1[[:space:]].*\|.*\|.*\bheavy\b" "$cases"; }

fail=0
t0=$(date +%s)
for i in $(seq 0 $((ncases - 1))); do
	n=${names[$i]}
	src=$work/src/$n
	# shellcheck disable=SC2086
	"$gentree" ${gargs[$i]} "$src" || kt_die "$n: gentree failed"
	for cfg in stock oldalloc toplevel; do
		[ $cfg = stock ] || ! heavy_of "$n" || continue
		policy=orlov target=/t/u
		[ $cfg = oldalloc ] && policy=oldalloc
		[ $cfg = toplevel ] && target=/
		img=$work/img/$n.$cfg.img
		kt_base_image "$i" "$img" "$target" "$work/log/$n.$cfg.mke2fs" "$work/prefill"
		if ! "$tool" -q --policy $policy --block-colour "${colours[$i]}" \
			--target $target --trace "$work/trace/$n.$cfg" "$img" "$src" \
			>"$work/log/$n.$cfg.tool" 2>&1; then
			echo "# $n ($cfg): orlov-populate failed:"
			tail -n 3 "$work/log/$n.$cfg.tool" | sed 's/^/#   /'
			fail=1
		fi
		rm -f "$img"
	done
	rm -rf "$src"
done
kt_log "$ncases cases traced in $(( $(date +%s) - t0 ))s"

# counts: "CFG CASE BRANCH N" and the orlov-near moves as branch orlov-near-moved
for f in "$work"/trace/*; do
	b=${f##*/}
	awk -v cfg="${b##*.}" -v cs="${b%.*}" '
		/^ext2_inode_alloc: / {
			br = ""; pg = ""; g = ""
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^branch=/) br = substr($i, 8)
				else if ($i ~ /^pgroup=/) pg = substr($i, 8)
				else if ($i ~ /^group=/) g = substr($i, 7)
			}
			c[br]++
			if (br == "orlov-near" && pg != g) c["orlov-near-moved"]++
		}
		END { for (k in c) print cfg, cs, k, c[k] }' "$f"
done | sort >"$work/counts"

branches="orlov-top orlov-near orlov-near-moved orlov-fallback other-parent other-hash other-linear dir"
echo "# inode decisions per branch (orlov-near-moved: orlov-near with group != pgroup)"
printf '# %-18s %9s %9s %9s %9s\n' branch stock oldalloc toplevel total
for br in $branches; do
	printf '# %-18s' "$br"
	for cfg in stock oldalloc toplevel; do
		printf ' %9d' "$(awk -v c=$cfg -v b=$br '$1 == c && $3 == b { s += $4 } END { print s + 0 }' "$work/counts")"
	done
	printf ' %9d\n' "$(awk -v b=$br '$3 == b { s += $4 } END { print s + 0 }' "$work/counts")"
done
echo "# per case (all configurations): branch=count"
for n in "${names[@]}"; do
	echo "#   $n: $(awk -v n="$n" '$2 == n { s[$3] += $4 } END { for (k in s) printf "%s=%d ", k, s[k] }' "$work/counts" | tr ' ' '\n' | sort | tr '\n' ' ')"
done

set -- $branches
echo "1..$(( $# + 1 ))"
k=0
for br in $branches; do
	k=$((k + 1))
	tot=$(awk -v b=$br '$3 == b { s += $4 } END { print s + 0 }' "$work/counts")
	where=$(awk -v b=$br '$3 == b { print $2 }' "$work/counts" | sort -u | head -n 4 | tr '\n' ' ')
	if [ "$tot" -gt 0 ]; then
		echo "ok $k - $br: $tot decisions (e.g. ${where% })"
	else
		echo "not ok $k - $br never occurs in the corpus"
		fail=1
	fi
done
k=$((k + 1))
if [ $fail = 0 ]; then
	echo "ok $k - every case populated with --trace"
else
	echo "not ok $k - some case failed or some branch is missing"
fi
exit $fail
