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
# And every Orlov near-loop limit must exclude some group: orlov-limits.awk
# replays the per-group free inodes, free blocks, used dirs and debts from the
# starting image (dumpe2fs, before the tool runs) and the trace, and for each
# orlov-near (and orlov-fallback reached from the near loop) names the first
# test, in the kernel's order, that each group skipped before the chosen one
# failed: no free inode, max_debt, max_dirs, min_inodes, min_blocks.  Each of
# the four limits must count at least once; the replay must agree with every
# record's avefreei/avefreeb (and the near loop's figures), or the test fails.
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
	-h|--help) sed -n '3,30p' "$0"; exit 0 ;;
	*) kt_die "unknown argument $1" ;;
	esac
	shift
done
tool=${ORLOV_POPULATE:-$top_builddir/src/orlov-populate}
[ -x "$tool" ] || kt_skip "orlov-populate not built ($tool)"
for c in mke2fs debugfs e2fsck dumpe2fs; do
	command -v $c >/dev/null || kt_skip "$c missing (e2fsprogs)"
done
gentree=$(kt_gentree) || exit 1
kt_workdir "$keep" src img trace log dump

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
		kt_base_image "$i" "$img" "$target" "$work/log/$n.$cfg.mke2fs" "$work/prefill" "$src"
		dumpe2fs "$img" >"$work/dump/$n.$cfg" 2>"$work/log/$n.$cfg.dumpe2fs" ||
			kt_die "$n ($cfg): dumpe2fs of the starting image failed"
		if ! "$tool" -q --policy $policy --block-colour "${colours[$i]}" ${merges[$i]} \
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

# Which limit excluded each group the near loop skipped: replay the per-group
# state from the starting image (dumpe2fs) and the trace (orlov-limits.awk).
# "limit CFG.CASE NAME N", "records CFG.CASE N", "mismatch CFG.CASE ..."
for f in "$work"/trace/*; do
	b=${f##*/}
	awk -v tag="$b" -f "$kt_here/orlov-limits.awk" "$work/dump/$b" "$f" ||
		echo "mismatch $b awk failed"
done >"$work/limits"
limits="max_debt max_dirs min_inodes min_blocks"
echo "# groups skipped by the orlov near loop, by the first test failed (kernel order)"
printf '# %-18s %9s %9s %9s %9s\n' limit stock oldalloc toplevel total
for l in nofree $limits; do
	printf '# %-18s' "$l"
	for cfg in stock oldalloc toplevel; do
		printf ' %9d' "$(awk -v c=$cfg -v l=$l '$1 == "limit" && $3 == l && $2 ~ "[.]" c "$" { s += $4 } END { print s + 0 }' "$work/limits")"
	done
	printf ' %9d\n' "$(awk -v l=$l '$1 == "limit" && $3 == l { s += $4 } END { print s + 0 }' "$work/limits")"
done
echo "# per case (all configurations): limit=count"
for n in "${names[@]}"; do
	echo "#   $n: $(awk -v n="$n" '$1 == "limit" && substr($2, 1, length(n) + 1) == n "." && $4 > 0 { s[$3] += $4 } END { for (k in s) printf "%s=%d ", k, s[k] }' "$work/limits" | tr ' ' '\n' | sort | tr '\n' ' ')"
done
nrecords=$(awk '$1 == "records" { s += $3 } END { print s + 0 }' "$work/limits")
ntraces=$(awk '$1 == "records"' "$work/limits" | wc -l)
nmism=$(grep -c '^mismatch ' "$work/limits")
if [ "$nmism" -gt 0 ]; then
	echo "# REPLAY MISMATCH: the state replayed from dumpe2fs and the trace disagrees with the records:"
	grep '^mismatch ' "$work/limits" | head -n 40 | sed 's/^mismatch /#   /'
fi

set -- $branches $limits
echo "1..$(( $# + 2 ))"
k=0
# count_point FILE FIELD1 NAME OK-FORMAT NOT-OK-TEXT: one TAP point over the
# rows "FIELD1 CASE NAME COUNT" of FILE (FIELD1 "-" matches any row); the
# total replaces %s in OK-FORMAT.
count_point() {
	local tot where
	k=$((k + 1))
	tot=$(awk -v f=$2 -v n=$3 '(f == "-" || $1 == f) && $3 == n { s += $4 } END { print s + 0 }' "$1")
	where=$(awk -v f=$2 -v n=$3 '(f == "-" || $1 == f) && $3 == n && $4 > 0 { print $2 }' "$1" |
		sort -u | head -n 4 | tr '\n' ' ')
	if [ "$tot" -gt 0 ]; then
		echo "ok $k - $(printf "$4" "$tot") (e.g. ${where% })"
	else
		echo "not ok $k - $5"
		fail=1
	fi
}
for br in $branches; do
	count_point "$work/counts" - "$br" "$br: %s decisions" "$br never occurs in the corpus"
done
for l in $limits; do
	count_point "$work/limits" limit "$l" "orlov limit $l skipped %s groups" \
		"orlov limit $l never skips a group in the corpus"
done
k=$((k + 1))
if [ "$nmism" = 0 ] && [ "$ntraces" -gt 0 ]; then
	echo "ok $k - replayed group state agrees with all $nrecords orlov/dir records of $ntraces traces"
else
	echo "not ok $k - replayed group state disagrees with the trace records ($nmism mismatch lines, $ntraces traces replayed)"
	fail=1
fi
k=$((k + 1))
if [ $fail = 0 ]; then
	echo "ok $k - every case populated with --trace"
else
	echo "not ok $k - some case failed or some check above failed"
fi
exit $fail
