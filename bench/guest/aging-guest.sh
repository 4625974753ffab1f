# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of one aging round of bench/aging.sh (busybox sh in the QEMU
# guest of tests/kernel/run-guest.sh).  /payload/plan.sh gives NAMES (the
# images in disk order, the marker disk after them) and ROUND.  For every
# image in turn: mount it read-write, apply /payload/changes.list with
# `agetool apply` (file contents from /payload/data), umount; then one
# measured cold traversal of the whole tree (bench/guest/traverse-guest.sh).
echo
. /payload/plan.sh
TG_LIB=1
. /payload/traverse-guest.sh
tg_init
for t in $NAMES; do
	dev=$(tg_dev $t)
	mount -t ${FSTYPE:-ext2} $dev /mnt || { echo "mount $t failed"; exit 5; }
	res=$(/payload/agetool apply /payload/changes.list /payload/data /mnt) ||
		{ echo "round $ROUND: applying the changes to $t failed"; umount /mnt; exit 9; }
	umount /mnt || exit 7
	echo "round $ROUND $t: $res"
	echo "$t $res" >>/results/applied
	tg_measure $t /
done
echo
exit 0
