#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Kernel test: images written offline are read back correctly by the real
# ext2 driver, which can then keep changing them fsck-clean.
# With orlov-populate built, its images are checked (ext2 1k + ext3 4k);
# without it, mke2fs -d stands in (this checks the harness) and the test
# reports skipped (77).
set -u
. "$(dirname "$0")/lib.sh"
kt_require_qemu
export MKE2FS_CONFIG=$kt_here/mke2fs.conf
UUID=6f726c6f-762d-706f-7075-6c6174650002
tool=${ORLOV_POPULATE:-$top_builddir/src/orlov-populate}
gentree=$(kt_gentree) || exit 1
tmp=$(kt_tmpdir)
trap 'rm -rf "$tmp"' EXIT

"$gentree" --seed 21 --profile mixed --scale 300 "$tmp/src" || exit 1
rc=0
for spec in "ext2 -b 1024 -I 128:64M:ext2" "ext3 -b 4096 -I 256 -g 4096:128M:ext3"; do
	opts=${spec%%:*} rest=${spec#*:}
	size=${rest%%:*} fstype=${rest#*:}
	img=$tmp/img
	rm -f "$img"
	if [ -x "$tool" ]; then
		# shellcheck disable=SC2086
		mke2fs -F -q -t $opts -U $UUID -E hash_seed=$UUID,root_owner=0:0 "$img" "$size" >/dev/null &&
			"$tool" "$img" "$tmp/src" || { echo "FAIL: making image ($opts)"; rc=1; continue; }
	else
		# shellcheck disable=SC2086
		mke2fs -F -q -t $opts -U $UUID -E hash_seed=$UUID,root_owner=0:0 \
			-d "$tmp/src" "$img" "$size" >/dev/null || { echo "FAIL: mke2fs -d"; rc=1; continue; }
	fi
	echo "# $opts"
	"$kt_here/guest-verify.sh" --fstype "$fstype" "$img" "$tmp/src" || rc=1
done
[ $rc = 0 ] || exit 1
if [ ! -x "$tool" ]; then
	echo "skipped: orlov-populate not built; harness checked with mke2fs -d"
	exit 77
fi
exit 0
