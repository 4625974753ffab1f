# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of bench/guest-traversal.sh and bench/aging.sh (busybox sh in
# the QEMU guest of tests/kernel/run-guest.sh).  Reads /payload/plan.sh:
#   NAMES    the image names, in disk order (/dev/vda, /dev/vdb, ...); the
#            disk after them is the marker disk
#   REPLAY   the name of the image to fill first with
#            `replay run --colour 0 /payload/tree.manifest /payload/tree`
#            (empty: none)
#   PERTOP   top-level directories to traverse cold one by one as well
#   READDIR  1: one more whole-tree traversal in readdir order
# A measured traversal: mount -o ro, sync, drop the caches, a read of
# marker 2S+1 on the marker disk, agetool traverse, a read of marker 2S+2,
# umount; the host cuts the QEMU request trace at the marker reads.
# Marker K is the 512-byte sector 4194304 + 512 (K + 1) of the marker disk
# (beyond the end of any 2 GiB image, and 256 KiB apart so that no
# readahead of one reaches the next; each is read once, through the page
# cache: busybox dd ignores iflag=direct).  Marker 0 comes first.  /results/segments gets "S NAME DIR entries=.. bytes=.. ns=..".
# Sourced with TG_LIB=1 (bench/guest/aging-guest.sh): the functions only.

TG_MARK=
tg_init() {
	letters=abcdefghijklmnopqrstuvwxyz
	n=0
	for x in $NAMES; do n=$((n + 1)); done
	TG_MARK=/dev/vd$(echo $letters | cut -c$((n + 1)))
	[ -b "$TG_MARK" ] || { echo "no marker disk $TG_MARK"; exit 3; }
	tg_seg=0
	: >/results/segments
	tg_mark 0
}

tg_mark() {
	dd if=$TG_MARK of=/dev/null bs=512 skip=$((4194304 + 512 * ($1 + 1))) count=1 2>/dev/null ||
		{ echo "marker read failed"; exit 4; }
}

tg_dev() { # NAME: its disk
	i=0
	for x in $NAMES; do
		if [ "$x" = "$1" ]; then
			echo /dev/vd$(echo $letters | cut -c$((i + 1)))
			return
		fi
		i=$((i + 1))
	done
}

# tg_measure NAME DIR [-r]: one cold traversal of DIR (/ = the whole tree)
tg_measure() {
	dev=$(tg_dev $1)
	mount -t ${FSTYPE:-ext2} -o ro $dev /mnt || { echo "mount $1 failed"; exit 5; }
	sync
	echo 3 >/proc/sys/vm/drop_caches
	tg_seg=$((tg_seg + 1))
	tg_mark $((2 * tg_seg + 1))
	if [ "$3" = -r ]; then
		res=$(/payload/agetool traverse -r /mnt$2) || { echo "traverse $1 $2 failed"; exit 6; }
	else
		res=$(/payload/agetool traverse /mnt$2) || { echo "traverse $1 $2 failed"; exit 6; }
	fi
	tg_mark $((2 * tg_seg + 2))
	umount /mnt || { echo "umount $1 failed"; exit 7; }
	echo "$tg_seg $1 $2$3 $res" >>/results/segments
	echo "segment $tg_seg $1 $2$3 $res"
}

tg_replay() { # NAME: the kernel fills it
	dev=$(tg_dev $1)
	mount -t ${FSTYPE:-ext2} $dev /mnt || { echo "mount $1 failed"; exit 5; }
	replay run --colour 0 /payload/tree.manifest /payload/tree /mnt ||
		{ echo "replay into $1 failed"; exit 8; }
	umount /mnt || exit 7
	echo "replayed into $1"
}

if [ "${TG_LIB:-0}" != 1 ]; then
	echo
	. /payload/plan.sh
	tg_init
	[ -z "$REPLAY" ] || tg_replay $REPLAY
	for t in $NAMES; do
		tg_measure $t /
		[ "$READDIR" != 1 ] || tg_measure $t / -r
		for d in $PERTOP; do tg_measure $t /$d; done
	done
	echo
	exit 0
fi
