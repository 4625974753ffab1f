#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What a failed run leaves and what the tool touches (issue 37): a run
# that fails for want of host space leaves the image file byte for byte,
# size and allocation as it was (item 11); the clean-up of killed runs'
# copies removes no user's file (item 6); an image a running QEMU holds
# is not written (item 14); a FIFO as IMAGE is refused, not waited on
# (item 15).
. "$(dirname "$0")/lib.sh"
export SOURCE_DATE_EPOCH=1700000000
P=$ORLOV_POPULATE
L=$ORLOV_LAYOUT
T=$T_TMP

# run NAME WANT-STATUS PATTERN PROGRAM ARGS...: the exit status, and
# stderr matched
run() {
	r_name=$1 r_want=$2 r_pat=$3
	shift 3
	"$@" >"$T/out" 2>"$T/err"
	r_rc=$?
	[ "$r_rc" = "$r_want" ] || { cat "$T/err" >&2; t_fail "$r_name: exit $r_rc, want $r_want"; }
	[ -z "$r_pat" ] || grep -Eq -- "$r_pat" "$T/err" || { cat "$T/err" >&2; t_fail "$r_name: stderr does not match /$r_pat/"; }
	echo "$r_name: ok"
}
# same NAME IMAGE PRISTINE: byte for byte, and the same size and
# allocated blocks (stat %s %b; synced first, for a host that counts
# blocks only once it has placed them)
same() {
	cmp -s "$2" "$3" || t_fail "$1: the image's bytes changed"
	sync "$2" "$3"
	[ "$(stat -c '%s %b' "$2")" = "$(stat -c '%s %b' "$3")" ] ||
		t_fail "$1: size and blocks $(stat -c '%s %b' "$2"), were $(stat -c '%s %b' "$3")"
}

src=$T/src
mkdir -p "$src/d"
printf 'hello\n' >"$src/d/f"
t_pin_times "$src"

# ---- item 11: the host out of space during an in-place ext3/ext4 run ----
# tests/fullfs.c (LD_PRELOAD) leaves FULLFS_FREE bytes for writes into the
# image's holes; punching a hole gives them back.  The images are sparse
# (cp --sparse=always).  With 2 MB of data and 1 KiB blocks (free blocks
# share a host page with metadata: data of zeros there), the host fills up
# while the data is written, while the commit's blocks are reserved, and
# (ORLOV_FAULT=enospc) during the journal commit itself: each time the
# image is byte for byte, size and allocated blocks, as it was.
full=$T/full
mkdir -p "$full"
# the images in RAM where there is some (tmpfs counts whole pages, no
# extent tree blocks of its own)
R=$(mktemp -d "$(t_ramdir)/orlov-commit.XXXXXX") || t_fail "mktemp"
trap 'rm -rf "$T_TMP" "$R"' EXIT
for i in 1 2 3 4 5 6 7 8; do
	head -c 250000 /dev/zero | tr '\0' "$i" >"$full/f$i"
done
t_pin_times "$full"
if ${CC:-cc} -shared -fPIC -o "$T/fullfs.so" "$top_srcdir/tests/fullfs.c" -ldl 2>"$T/cc.err" &&
   LD_PRELOAD=$T/fullfs.so "$P" --version >/dev/null 2>&1; then
	for fs in ext3 ext4; do
		t_mkimage "$R/$fs.mkfs" 16M -t $fs -b 1024
		cp --sparse=always "$R/$fs.mkfs" "$R/$fs.pristine"
		for free in 100000 1000000 2100000; do
			cp --sparse=always "$R/$fs.pristine" "$R/$fs.img"
			FULLFS_MATCH=$fs.img FULLFS_FREE=$free LD_PRELOAD=$T/fullfs.so \
				run "full-$fs-$free" 1 "No space left" "$P" "$R/$fs.img" "$full"
			t_fsck "$R/$fs.img"
			same "full-$fs-$free" "$R/$fs.img" "$R/$fs.pristine"
		done
		grep -q "reserving host space" "$T/err" ||
			t_fail "full-$fs: the last run did not fail at the reservation"
		cp --sparse=always "$R/$fs.pristine" "$R/$fs.img"
		ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" "$R/$fs.img" "$full" >/dev/null 2>"$T/count" ||
			t_fail "count-$fs: $(cat "$T/count")"
		at=$(sed -n 's/.*commit from \([0-9]*\).*/\1/p' "$T/count")
		for n in $at $((at + 3)); do
			cp --sparse=always "$R/$fs.pristine" "$R/$fs.img"
			ORLOV_FAULT=enospc:$n run "enospc-$fs-$n" 1 "No space left" \
				"$ORLOV_HOOKS_POPULATE" "$R/$fs.img" "$full"
			t_fsck "$R/$fs.img"
			same "enospc-$fs-$n" "$R/$fs.img" "$R/$fs.pristine"
		done
	done
else
	echo "full-host: skipped (no compiler or LD_PRELOAD: $(head -1 "$T/cc.err"))"
fi
# ---- item 6: the clean-up of killed runs' copies deletes no user file ----
# A user's files of the names copies had and have (.IMAGE.orlov-XXXXXX;
# .IMAGE.orlov-INODE for another inode), non-empty, unlocked, stay; the
# copy a killed run left (named for its own inode) goes.
img=$T/disk.img
t_mkimage "$img" 8M -t ext2 -b 1024
printf 'mine\n' >"$T/.disk.img.orlov-abc123"
printf 'mine\n' >"$T/.disk.img.orlov-0000000000000001"
printf 'mine\n' >"$T/.disk.img.orlov-ffffffffffffffff"
ORLOV_FAULT=kill:1 "$ORLOV_HOOKS_POPULATE" "$img" "$src" >/dev/null 2>&1 && t_fail "kill:1 did not kill"
copy=$(ls -a "$T" | grep '^\.disk\.img\.orlov-[0-9a-f]\{16\}$' |
       grep -v -e 0000000000000001 -e ffffffffffffffff)
[ -n "$copy" ] || t_fail "stale: the killed run left no copy named for its inode"
[ "$(stat -c %i "$T/$copy")" = "$(printf %d "0x${copy#.disk.img.orlov-}")" ] ||
	t_fail "stale: $copy is not named for its inode"
run stale-user 0 "removed 1 stale copy of $img" "$P" "$img" "$src"
left=$(ls -a "$T" | grep '^\.disk\.img\.orlov-' | tr '\n' ' ')
[ "$left" = ".disk.img.orlov-0000000000000001 .disk.img.orlov-abc123 .disk.img.orlov-ffffffffffffffff " ] ||
	t_fail "stale-user: left '$left'"
for f in abc123 0000000000000001 ffffffffffffffff; do
	[ "$(cat "$T/.disk.img.orlov-$f")" = mine ] || t_fail "stale-user: $f changed"
done
t_fsck "$img"

# ---- item 14: an image a running QEMU holds (OFD locks) is not written ----
# tests/ofdlock.c takes the shared OFD locks a QEMU guest keeps on its
# image (bytes 100+ and 200+) and holds them while the tool runs.
if ${CC:-cc} -o "$T/ofdlock" "$top_srcdir/tests/ofdlock.c" 2>"$T/cc.err"; then
	for mode in "" --in-place --atomic; do
		t_mkimage "$img" 8M -t ext3 -b 1024
		cp "$img" "$T/locked.pristine"
		rm -f "$T/ready"
		"$T/ofdlock" "$img" "$T/ready" &
		holder=$!
		i=0
		while [ ! -e "$T/ready" ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		[ -e "$T/ready" ] || { kill $holder; t_fail "ofdlock: no lock taken"; }
		run "qemu-locked$mode" 1 "^orlov-populate: Another process holds a lock on IMAGE \(a running virtual machine\?.* while opening filesystem $img$" \
			"$P" $mode "$img" "$src"
		[ "$(wc -l <"$T/err")" = 1 ] || t_fail "qemu-locked$mode: not one line"
		# a dry run and orlov-layout only read it
		run "qemu-locked-dry$mode" 0 "" "$P" --dry-run "$img" "$src"
		kill $holder
		wait $holder 2>/dev/null
		cmp -s "$img" "$T/locked.pristine" || t_fail "qemu-locked$mode: the image changed"
	done
	# the guest gone, the same run writes it
	run qemu-unlocked 0 "" "$P" "$img" "$src"
else
	echo "qemu-locked: skipped (no compiler: $(head -1 "$T/cc.err"))"
fi

# ---- item 15: a FIFO as IMAGE is refused, not waited on ----
mkfifo "$T/fifo" || t_fail "mkfifo"
fifo_msg="IMAGE is neither a regular file nor a block device while"
run fifo-populate 1 "^orlov-populate: $fifo_msg checking $T/fifo$" \
	timeout 20 "$P" "$T/fifo" "$src"
run fifo-dry-run 1 "^orlov-populate: $fifo_msg checking $T/fifo$" \
	timeout 20 "$P" --dry-run "$T/fifo" "$src"
run fifo-create 1 "^orlov-populate: $fifo_msg checking $T/fifo$" \
	timeout 20 "$P" --create 8M "$T/fifo" "$src"
run fifo-dump 2 "^orlov-layout: $fifo_msg opening image $T/fifo$" \
	timeout 20 "$L" dump "$T/fifo"
run fifo-verify 2 "^orlov-layout: $fifo_msg opening image $T/fifo$" \
	timeout 20 "$L" verify "$T/fifo" "$src"
[ -p "$T/fifo" ] || t_fail "fifo: no longer a FIFO"

echo "all ok"
