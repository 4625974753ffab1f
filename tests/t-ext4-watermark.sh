#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --possible-cpus: ext4's delayed allocation stops delaying within its
# watermark of free space, 4 * batch (of the online CPUs) * nr_cpu_ids
# (the possible ones).  6 MB of data into an 8 MiB 1 KiB-block ext4
# image, 2 CPUs online: with 2 or 8 possible the watermark (256, 1024
# blocks) is never reached and every block waits for the writeback; with
# 64 (8192 blocks) the later files are written undelayed, elsewhere.
# The default is --cpus; the option's refusals.
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
		"$T_TMP/$n.img" "$T_TMP/src" || t_fail "$n: populate"
	t_fsck "$T_TMP/$n.img"
}
fill default
fill p2 --possible-cpus 2
fill p8 --possible-cpus 8
fill p64 --possible-cpus 64
cmp -s "$T_TMP/default.img" "$T_TMP/p2.img" ||
	t_fail "--possible-cpus 2 is not the default of --cpus 2"
"$ORLOV_LAYOUT" diff "$T_TMP/default.img" "$T_TMP/p8.img" >/dev/null ||
	t_fail "8 possible CPUs: the watermark (1024 blocks) is not reached, yet the layout moved"
if "$ORLOV_LAYOUT" diff "$T_TMP/default.img" "$T_TMP/p64.img" >/dev/null; then
	t_fail "64 possible CPUs: the watermark (8192 blocks) changed nothing"
fi
t_verify "$T_TMP/p64.img" "$T_TMP/src"
echo "watermark: 2 and 8 possible CPUs alike, 64 undelayed near the end"

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
