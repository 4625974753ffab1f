#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel test: an ext3 run killed after its journal transaction was
# committed, anywhere in the writing home of its blocks, is completed by
# the real kernel's journal recovery at mount: the guest reads back the
# whole tree (guest-verify.sh --recover), and the image is e2fsck-clean
# after the umount.  The tool's transaction is the kernel's to replay.
set -u
. "$(dirname "$0")/lib.sh"
kt_require_qemu
export MKE2FS_CONFIG=$kt_here/mke2fs.conf
UUID=6f726c6f-762d-706f-7075-6c6174650003
# the test build, which reads ORLOV_FAULT (the installed program does not)
tool=${ORLOV_HOOKS_POPULATE:-$top_builddir/tests/orlov-populate-hooks}
[ -x "$tool" ] || { echo "skipped: tests/orlov-populate-hooks not built"; exit 77; }
gentree=$(kt_gentree) || exit 1
tmp=$(kt_tmpdir)
trap 'rm -rf "$tmp"' EXIT

"$gentree" --seed 25 --profile mixed --scale 200 "$tmp/src" || exit 1
mke2fs -F -q -t ext3 -b 1024 -I 256 -U $UUID -E hash_seed=$UUID,root_owner=0:0 \
	"$tmp/base.img" 64M >/dev/null || exit 1
cp "$tmp/base.img" "$tmp/count.img"
ORLOV_FAULT=count "$tool" -q "$tmp/count.img" "$tmp/src" 2>"$tmp/count" || {
	cat "$tmp/count"; echo "FAIL: the run without a fault"; exit 1; }
total=$(sed -n 's/.*: \([0-9]*\) operations, commit from.*/\1/p' "$tmp/count")
# the points where the log is committed and recovery has work to do
points=
for n in $(seq "$total" -1 1); do
	cp "$tmp/base.img" "$tmp/w.img"
	(ORLOV_FAULT=kill:$n exec "$tool" -q "$tmp/w.img" "$tmp/src") 2>/dev/null
	dumpe2fs -h "$tmp/w.img" 2>/dev/null | grep -q '^Journal start: *[1-9]' || {
		[ -n "$points" ] && break; continue; }
	points="$n $points"
done
set -- $points
[ $# -ge 3 ] || { echo "FAIL: only $# points with a committed log"; exit 1; }
# the first, the middle and the last of them
rc=0
for n in "$1" "$(eval echo \${$((($# + 1) / 2))})" "${!#}"; do
	cp "$tmp/base.img" "$tmp/w.img"
	(ORLOV_FAULT=kill:$n exec "$tool" -q "$tmp/w.img" "$tmp/src") 2>/dev/null
	echo "# killed before operation $n of $total ($# points with a committed log)"
	"$kt_here/guest-verify.sh" --recover --no-modify --fstype ext3 "$tmp/w.img" "$tmp/src" || rc=1
done
exit $rc
