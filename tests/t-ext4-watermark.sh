#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --possible-cpus: ext4's delayed allocation stops delaying within its
# watermark of free space, 4 * batch (of the online CPUs) * nr_cpu_ids
# (the possible ones).  6 MB of data into an 8 MiB 1 KiB-block ext4
# image, 2 CPUs online: the delayed data is written back whenever it
# passes half the free space, so with 2 possible CPUs (256 blocks) the
# watermark is never reached; with 8 (1024 blocks) it is near the end,
# and the last pages are written undelayed; with 64 (8192 blocks) from
# the first page on.  The default is --cpus; the option's refusals.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T_TMP/src"
i=0
while [ $i -lt 40 ]; do
	i=$((i + 1))
	head -c 153600 /dev/zero | tr '\0' "$(printf "\\$(printf %o $((65 + i % 26)))")" \
		>"$T_TMP/src/f$i" || t_fail "source"
done
t_pin_times "$T_TMP/src"
fill() { # NAME OPTIONS...
	local n=$1
	shift
	t_mkimage "$T_TMP/$n.img" 8M -t ext4 -b 1024
	"$ORLOV_POPULATE" -q --driver ext4 --delalloc --cpus 2 "$@" \
		--trace "$T_TMP/$n.trace" "$T_TMP/$n.img" "$T_TMP/src" ||
		t_fail "$n: populate"
	t_fsck "$T_TMP/$n.img"
}
# data blocks allocated when written (not delayed: no DELALLOC_RESV)
undelayed() {
	grep -c '^ext4_allocate_blocks: .* flags HINT_DATA len 1 ' "$T_TMP/$1.trace"
}
fill default
fill p2 --possible-cpus 2
fill p8 --possible-cpus 8
fill p64 --possible-cpus 64
cmp -s "$T_TMP/default.img" "$T_TMP/p2.img" ||
	t_fail "--possible-cpus 2 is not the default of --cpus 2"
if "$ORLOV_LAYOUT" diff "$T_TMP/p2.img" "$T_TMP/p8.img" >/dev/null; then
	t_fail "8 possible CPUs: the watermark (1024 blocks) changed nothing"
fi
if "$ORLOV_LAYOUT" diff "$T_TMP/p8.img" "$T_TMP/p64.img" >/dev/null; then
	t_fail "64 possible CPUs: the watermark (8192 blocks) changed nothing"
fi
[ "$(undelayed p2)" = 0 ] || t_fail "2 possible CPUs: $(undelayed p2) blocks undelayed"
u=$(undelayed p8)
[ "$u" -gt 0 ] && [ "$u" -lt 1000 ] || t_fail "8 possible CPUs: $u blocks undelayed, not the last few hundred"
[ "$(undelayed p64)" = 6000 ] || t_fail "64 possible CPUs: $(undelayed p64) of 6000 blocks undelayed"
t_verify "$T_TMP/p64.img" "$T_TMP/src"
echo "watermark: 2 possible CPUs never reach it, 8 near the end, 64 from the start"

refused() { # WHAT MESSAGE OPTIONS...
	local what=$1 msg=$2 out
	shift 2
	if out=$("$ORLOV_POPULATE" "$@" "$T_TMP/default.img" "$T_TMP/src" 2>&1); then
		t_fail "$what: accepted"
	fi
	case $out in
	*"$msg"*) ;;
	*) echo "$out" >&2; t_fail "$what: not the expected message" ;;
	esac
}
refused below-online "give at least --cpus N" --cpus 4 --possible-cpus 2
refused up "a uniprocessor kernel has one CPU" --possible-cpus 4
refused ext2 "give --driver ext4" --driver ext2 --cpus 2 --possible-cpus 4
refused zero "--possible-cpus takes a number from 1 to 8192" --cpus 2 --possible-cpus 0
echo "refusals: ok"
