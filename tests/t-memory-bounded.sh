#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ext4's delayed allocation in bounded memory: each file waiting for the
# writeback is a record of a few bytes, not a copy of its allocation
# state (about 390 bytes a file before), and the records past a budget
# (ORLOV_STAGE_BUDGET, KiB, for tests) go to a scratch file.  So 50,000
# small files take about the memory with --delalloc that they take
# without (it was 19 MiB more), and the image made with every record
# spilled is the one made with all of them in memory, byte for byte.
. "$(dirname "$0")/lib.sh"
[ -x /usr/bin/time ] || t_skip "no /usr/bin/time (package time)"
command -v python3 >/dev/null 2>&1 || t_skip "no python3"

# 50 directories of 1,000 files of 1 to 200 bytes: one delayed block each
python3 - "$T_TMP/src" <<'PY' || t_fail "python tree"
import os, sys
for d in range(50):
    p = os.path.join(sys.argv[1], 'd%02d' % d)
    os.makedirs(p)
    for f in range(1000):
        with open(os.path.join(p, 'f%03d' % f), 'wb') as h:
            h.write(b'x' * (1 + (d * 1000 + f) * 7919 % 200))
PY

# run NAME BUDGET [OPTIONS...]: a fresh ext4 image NAME.img filled;
# rss is the run's peak in KiB (BUDGET empty: the default budgets)
run() {
	r_name=$1 r_budget=$2
	shift 2
	t_mkimage "$T_TMP/$r_name.img" 160M -t ext4 -b 1024 -I 256 -N 51000
	ORLOV_STAGE_BUDGET=$r_budget /usr/bin/time -f %M -o "$T_TMP/rss" \
		"$ORLOV_HOOKS_POPULATE" -q "$@" "$T_TMP/$r_name.img" "$T_TMP/src" ||
		t_fail "$r_name: exit $?"
	t_fsck "$T_TMP/$r_name.img"
	rss=$(tail -n 1 "$T_TMP/rss")
}

run nodelalloc "" --no-delalloc
nd=$rss
run delalloc ""
da=$rss
echo "peak RSS, 50,000 small files: $da KiB with --delalloc, $nd KiB without"
# a sanitizer build's allocator keeps freed memory in quarantine, so its
# peak says nothing of what is held (the comparisons below still run)
if grep -q __asan_init "$ORLOV_POPULATE"; then
	echo "peak RSS not compared: a sanitizer build"
elif [ $((da - nd)) -ge 6144 ]; then
	t_fail "--delalloc holds $((da - nd)) KiB more than --no-delalloc for 50,000 files (at most 6 MiB)"
fi

# every record through the scratch file (1 KiB), and none (1 GiB)
run spilled 1 --delalloc
run memory 1048576 --delalloc
cmp "$T_TMP/spilled.img" "$T_TMP/memory.img" ||
	t_fail "the image made with the delayed files' records spilled differs"
cmp "$T_TMP/delalloc.img" "$T_TMP/memory.img" ||
	t_fail "the image made with the default budgets differs"
echo "--delalloc: the same image with the records spilled and in memory"

# the writeback's reader ahead (populate/wb_ahead.c) hands over what it
# read of each file: the image the writeback makes reading every file
# itself, with one thread, must be the same
run onejob 1 --delalloc --jobs 1
cmp "$T_TMP/onejob.img" "$T_TMP/spilled.img" ||
	t_fail "the image made with --jobs 1 differs from the one read ahead"
echo "--delalloc: the same image read ahead and with --jobs 1"
