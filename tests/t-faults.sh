#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults at every I/O operation of a ~1,000-entry run into an image that
# already holds files (ORLOV_FAULT, src/image/io_guard.h numbers the writes,
# byte writes and flushes):
#   kill:N     SIGKILL before operation N, the commit as by default: an
#              image file without a journal is written as a copy renamed
#              over it at the end, so the image is byte for byte as it was;
#              with a journal too short for the commit, the commit goes to
#              a copy, and the image is exactly the old filesystem (only
#              free blocks differ) or the new one, e2fsck -fn clean as it
#              is.
#   inplace:N  the same with --in-place: the image must pass e2fsck -fn as
#              it is, or after e2fsck -fy, and every file that was there
#              before must keep its inode, blocks and contents.  Killed
#              before the commit starts, nothing may show at all.
#   eio:N      operation N fails.  One error line, and the image exactly as
#              it was (dumpe2fs, every path's inode and blocks; the file's
#              bytes, size and allocated blocks).
#   ipeio:N    the same with --in-place: the failed commit is rolled back.
#   kill:N with --undo: e2undo puts the image back as it was.
#   kill:N with --atomic: the image is byte for byte as it was.
#   eioread:N  block read N fails: as eio.
#   kill:N on ext3, whose commit is one journal transaction: after
#              recovery (e2fsck -fy replays the journal, as mount does,
#              and repairs nothing else) e2fsck -fn passes and every path
#              is exactly as before the run or exactly as after it.
#   The same on metadata_csum images (ext4 driver): ext3 whose journal
#              has checksums v3, ext2 in place; and on ext4 images
#              (mke2fs -t ext4) through the journal and, without one, in
#              place, every fourth operation.
# T_FAULT_STRIDE=K tries every K-th operation only; T_FAULT_KILL_STRIDE=K
# (default T_FAULT_STRIDE) the same for the kill runs alone, and
# T_FAULT_KILL_TAIL=N their last N operations (default 64).  The sanitizer
# pass of tools/check.sh keeps every fifth write and read failure and the
# last 64 (each point takes another error path) but every 25th kill and the
# last 8: a killed run executes a prefix of the run the plain pass already
# checked at every point.  Kills before the commit starts are tried every
# T_FAULT_PRE_STRIDE-th operation (default 8; see run()), undo's at every.
# T_KEEP=DIR keeps the images and outputs there.
. "$(dirname "$0")/lib.sh"
command -v setfacl >/dev/null 2>&1 || t_skip "setfacl not found (acl)"

stride=${T_FAULT_STRIDE:-1}
# Each point's image in RAM: its e2fsck -fy, --undo and the copy a kill
# commits through sync to disk, and waiting for that was half a journal
# kill point's time.
ptmp=$(t_ramdir)
kstride=${T_FAULT_KILL_STRIDE:-$stride}
D=${T_KEEP:-$T_TMP}

# The fault points run as processes of their own, two at a time, and a
# few to a shell (--one KIND N...: this script's start, lib.sh's mktemp and
# the scenario's files read once for them); each point in a subshell, that
# its verdict's exit ends it alone.
point() {
	n=$1
	cp "$D/base.img" "$w"
	# base.img passed e2fsck -fn once (scenario): not once more per point
	set -- -t /data --no-fsck $args
	[ "$kind" = undo ] && set -- --undo "$T_TMP/u" "$@"
	[ "$kind" = atomic ] && set -- --atomic "$@"
	[ "$kind" = inplace ] || [ "$kind" = ipeio ] && set -- --in-place "$@"
	f=$kind
	case $kind in undo|atomic|jkill|inplace) f=kill ;; ipeio) f=eio ;; esac
	had=$(stat -c '%s %b' "$w")
	ORLOV_FAULT=$f:$n "$ORLOV_HOOKS_POPULATE" "$@" "$w" "$src" \
		>/dev/null 2>"$T_TMP/err"
	rc=$?
	bad() { echo "$kind:$n FAIL: $*"; exit 0; }
	# a copy a killed run left beside the image (a failed one is
	# removed by the run itself)
	set -- "$T_TMP"/.w.img.orlov-*
	if [ -e "$1" ]; then
		case $kind in
		eio|ipeio|eioread) bad "the failed run left its copy" ;;
		esac
		rm -f "$@"
	fi
	dump_w() {
		"$ORLOV_LAYOUT" dump "$w" >"$T_TMP/dump" || bad "dump failed"
	}
	# after dump_w
	same_as_base() {
		cmp -s "$T_TMP/dump" "$D/base.dump" ||
			bad "paths differ from the image before the run"
	}
	# every path exactly as before the run, or as after it
	old_or_new() {
		dump_w
		if cmp -s "$T_TMP/dump" "$D/base.dump"; then
			out=old
		elif cmp -s "$T_TMP/dump" "$D/count.dump"; then
			out=new
		else
			bad "neither the filesystem before nor the one after"
		fi
	}
	kept_old() {
		dump_w
		# every old path: same inode; same blocks unless a directory
		# (lost+found and the target may grow); refcounts may change
		awk 'NR == FNR { old[$1] = $0; next }
		     ($1 in old) {
			o = old[$1]; gsub(/ xrefs=[0-9]+/, "", o)
			c = $0; gsub(/ xrefs=[0-9]+/, "", c)
			split(o, f, " ")
			if ($4 == "dir" ? f[2] != $2 : o != c) print "changed " $1
			delete old[$1]
		     }
		     END { for (p in old) print "lost " p }' \
			"$D/base.dump" "$T_TMP/dump" >"$T_TMP/loss"
		[ -s "$T_TMP/loss" ] && bad "$(sort "$T_TMP/loss" | head -3 | tr '\n' ' ')"
		for p in b1 data/old; do
			"$ORLOV_LAYOUT" verify $t_clamp "$w" "$D/base/$p" "/$p" >/dev/null 2>&1 ||
				bad "contents of /$p differ"
		done
	}
	case $kind in
	kill)
		[ $rc = 137 ] || bad "exit $rc, not killed"
		if cmp -s "$w" "$D/base.img"; then
			out=untouched
		else
			e2fsck -fn "$w" >/dev/null 2>&1 || bad "e2fsck -fn"
			old_or_new
		fi
		;;
	inplace)
		[ $rc = 137 ] || bad "exit $rc, not killed"
		if e2fsck -fn "$w" >/dev/null 2>&1; then
			out=clean
		else
			e2fsck -fy "$w" >/dev/null 2>&1
			e2fsck -fn "$w" >/dev/null 2>&1 || bad "e2fsck -fy did not repair it"
			out=repaired
		fi
		kept_old
		[ "$n" -lt "$commit" ] && { [ $out = clean ] || bad "$out before the commit"; same_as_base; }
		;;
	eio|ipeio|eioread)
		[ $rc = 1 ] || bad "exit $rc"
		# read by the shell: two processes fewer at each point
		{ IFS= read -r line && ! IFS= read -r more; } <"$T_TMP/err" ||
			bad "not one line: $(cat "$T_TMP/err")"
		case $line in
		"orlov-populate: "*" while "[a-z]*) ;;
		*) bad "message: $line" ;;
		esac
		e2fsck -fn "$w" >/dev/null 2>&1 || bad "e2fsck -fn"
		dumpe2fs "$w" 2>/dev/null | cmp -s - "$D/base.dumpe2fs" ||
			bad "dumpe2fs differs"
		# the file itself too: what the run wrote into free blocks and
		# holes given back (tests/t-trust-commit.sh, issue 37 item 11)
		cmp -s "$w" "$D/base.img" || bad "the image's bytes changed"
		[ "$(stat -c '%s %b' "$w")" = "$had" ] ||
			bad "size and blocks $(stat -c '%s %b' "$w"), were $had"
		dump_w
		same_as_base
		out=restored
		;;
	undo)
		[ $rc = 137 ] || bad "exit $rc, not killed"
		if [ ! -s "$T_TMP/u" ]; then
			# killed before the undo file's first block: nothing written
			cmp -s "$w" "$D/base.img" || bad "image changed, undo file empty"
			out=untouched
		else
			out=undone
			e2undo "$T_TMP/u" "$w" >"$T_TMP/undo" 2>&1
			if grep -q "superblock doesn't match" "$T_TMP/undo"; then
				# killed after a superblock write and before the
				# undo file's header caught up with it (undo_io
				# rewrites it at each new block it saves)
				e2undo -f "$T_TMP/u" "$w" >"$T_TMP/undo" 2>&1 ||
					bad "e2undo -f: $(cat "$T_TMP/undo")"
				out=undone-forced
			fi
			e2fsck -fn "$w" >/dev/null 2>&1 || bad "e2fsck -fn after e2undo"
			# an incomplete undo record leaves the state "not clean"
			dumpe2fs "$w" 2>/dev/null | grep -v '^Filesystem state:' |
				cmp -s - "$D/base.dumpe2fs.nostate" || bad "dumpe2fs differs after e2undo"
			dump_w
			same_as_base
		fi
		;;
	jkill)
		# through the journal: after recovery (e2fsck -fy replays it,
		# as mount does) exactly the old filesystem or the new one
		[ $rc = 137 ] || bad "exit $rc, not killed"
		e2fsck -fy "$w" >"$T_TMP/fy" 2>&1
		[ $? -le 1 ] || bad "e2fsck -fy: $(tail -2 "$T_TMP/fy")"
		grep -Eq '^(Fix|Clear|Salvage|Connect|Relocate)' "$T_TMP/fy" &&
			bad "e2fsck -fy repaired more than the journal: $(grep -E '^(Fix|Clear|Salvage|Connect|Relocate)' "$T_TMP/fy" | head -2)"
		e2fsck -fn "$w" >/dev/null 2>&1 || bad "not clean after recovery"
		old_or_new
		;;
	atomic)
		[ $rc = 137 ] || bad "exit $rc, not killed"
		cmp -s "$w" "$D/base.img" || bad "the image changed"
		out=untouched
		;;
	esac
	echo "$kind:$n $out"
}
if [ "${1:-}" = --one ]; then
	D=$T_FAULT_DIR kind=$2 w=$T_TMP/w.img src=$T_FAULT_DIR/new
	[ -e "$D/new.tar" ] && src=$D/new.tar
	args=$(cat "$D/extra_args") commit=$(cat "$D/commit")
	shift 2
	for p; do
		(point "$p")
		# the next point starts as a shell of its own did
		for f in "$T_TMP/u" "$T_TMP"/.w.img.orlov-*; do
			[ -e "$f" ] && rm -f "$f"
		done
	done
	exit 0
fi

# A base image with files the faulted run must not lose: two directories
# of files, one of them the target.  The target and a new directory have
# the same ACLs, so that with 128-byte inodes the new one shares the
# target's attribute block (an attribute block on disk gains a reference).
scenario() {
	rm -rf "$D/base" "$D/new" "$D/new.tar"
	mkdir -p "$D/base/b1/sub" "$D/base/data/old" "$D/new"
	for i in $(seq 1 30); do echo "base $i" >"$D/base/b1/f$i"; done
	head -c 50000 /dev/zero | tr '\0' 'q' >"$D/base/b1/sub/big"
	for i in $(seq 1 40); do echo "old $i" >"$D/base/data/old/o$i"; done
	# the target's first block nearly full: the new names overflow it
	for i in $(seq 10 49); do : >"$D/base/data/already-here-$i"; done
	for d in "$D/base/data" "$D/new/d1"; do
		mkdir -p "$d"
		setfacl -m g:42:r-x "$d" && setfacl -d -m g:42:r-x "$d" ||
			t_fail "setfacl $d"
	done
	# 920 entries; few with data, so that there are few operations to
	# fault: some over the 1 KiB blocks' first indirect block
	for d in $(seq 1 20); do
		mkdir -p "$D/new/d$d/e"
		for f in $(seq 1 24); do : >"$D/new/d$d/f$f"; done
		for f in $(seq 1 20); do : >"$D/new/d$d/e/g$f"; done
		for f in 1 2 3 4 5; do echo "n $d $f" >"$D/new/d$d/f$f"; done
	done
	for f in $(seq 1 20); do
		head -c $((f * 900)) /dev/zero | tr '\0' 'z' >"$D/new/d1/e/g$f"
	done
	ln -s "/$(printf 'x%.0s' $(seq 1 80))" "$D/new/slow"
	# T_MANY more empty files: an inode table too big for a journal
	if [ "${T_MANY:-0}" -gt 0 ]; then
		mkdir "$D/new/many"
		(cd "$D/new/many" && seq -f m%g 1 "$T_MANY" | xargs touch)
	fi
	t_pin_times "$D/base"
	t_pin_times "$D/new"
	"$ORLOV_POPULATE" $(cat "$D/extra_args") "$D/base.img" "$D/base" >/dev/null ||
		t_fail "populating the base image"
	t_fsck "$D/base.img"
	"$ORLOV_LAYOUT" dump "$D/base.img" >"$D/base.dump"
	dumpe2fs "$D/base.img" 2>/dev/null >"$D/base.dumpe2fs"
	grep -v '^Filesystem state:' "$D/base.dumpe2fs" >"$D/base.dumpe2fs.nostate"
	cp "$D/base.img" "$D/count.img"
	ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" -t /data $(cat "$D/extra_args") \
		"$D/count.img" "$D/new" 2>"$D/count" >/dev/null ||
		t_fail "the run without a fault failed: $(cat "$D/count")"
	t_fsck "$D/count.img"
	# the points' --no-fsck: the same operations, the same image
	cp "$D/base.img" "$D/count-nofsck.img"
	ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" -t /data --no-fsck $(cat "$D/extra_args") \
		"$D/count-nofsck.img" "$D/new" 2>"$D/count-nofsck" >/dev/null &&
		cmp -s "$D/count" "$D/count-nofsck" &&
		cmp -s "$D/count.img" "$D/count-nofsck.img" ||
		t_fail "--no-fsck: not the same operations or image: $(cat "$D/count-nofsck")"
	rm -f "$D/count-nofsck.img"
	for d in "$D"/new/d*; do t_verify "$D/count.img" "$d" "/data/${d##*/}"; done
	sed -n 's/.*: \([0-9]*\) operations, commit from \([0-9]*\)$/\1/p' "$D/count" >"$D/total"
	sed -n 's/.*, commit from \([0-9]*\)$/\1/p' "$D/count" >"$D/commit"
	sed -n 's/.*: \([0-9]*\) reads$/\1/p' "$D/count" >"$D/reads"
	[ -s "$D/total" ] || t_fail "no operation count: $(cat "$D/count")"
}

# run NAME KIND STRIDE: every STRIDE-th operation, and every one of the
# last 64 (the end of the commit; for the kill runs the last
# T_FAULT_KILL_TAIL, default 64); eioread: of the reads.
# A kill before the commit (kill, inplace, atomic, jkill) must leave
# nothing the old filesystem can see, and what the run wrote until then
# stays written: a write that showed would show at every later kill
# point before the commit too, the last one (all of the run's writes
# done, none of the commit's) most of all.  So those points are tried
# every T_FAULT_PRE_STRIDE-th (default 8) and the last two always;
# failures (each its own error path) and undo (each point a different
# undo file for e2undo) keep every point.
run() {
	name=$1 kind=$2 step=$3 total=$(cat "$D/total") tail=64
	commit=$(cat "$D/commit") pre=$step
	[ "$kind" = eioread ] && total=$(cat "$D/reads") commit=1
	case $kind in eio|ipeio|eioread) ;; *) tail=${T_FAULT_KILL_TAIL:-64} ;; esac
	case $kind in
	kill|inplace|atomic|jkill)
		pre=${T_FAULT_PRE_STRIDE:-8}
		[ "$pre" -ge "$step" ] || pre=$step ;;
	esac
	{ [ "$commit" -le 1 ] || { seq 1 "$pre" $((commit - 1)); echo $((commit - 1)); }
	  seq "$commit" "$step" "$total"
	  [ "$tail" = 0 ] || seq $((total > tail ? total - tail + 1 : 1)) "$total"; } |
		sort -nu >"$D/$name.points"
	TMPDIR=$ptmp T_FAULT_DIR=$D xargs -P 2 -n 8 sh "$0" --one "$kind" <"$D/$name.points" \
		>"$D/$name.out" 2>&1
	if grep -v -E '^[a-z]+:[0-9]+ (clean|repaired|restored|undone|undone-forced|untouched|old|new)$' \
		"$D/$name.out" >"$D/$name.bad"; then
		head -5 "$D/$name.bad" >&2
		t_fail "$name: $(wc -l <"$D/$name.bad") bad points"
	fi
	# a shell that died between its points would leave no verdict
	[ "$(wc -l <"$D/$name.out")" = "$(wc -l <"$D/$name.points")" ] ||
		t_fail "$name: $(wc -l <"$D/$name.out") verdicts for $(wc -l <"$D/$name.points") points"
	what="operations (commit from $(cat "$D/commit"))"
	[ "$kind" = eioread ] && what="block reads"
	echo "$name: $(wc -l <"$D/$name.out") of $total $what:" \
		$(awk '{ n[$2]++ } END { for (k in n) printf "%s=%d\n", k, n[k] }' \
		"$D/$name.out" | sort)
}

t_mkimage "$D/base.img" 16M -t ext2 -b 1024 -N 2048
tune2fs -o acl "$D/base.img" >/dev/null
: >"$D/extra_args"
scenario
# what the commit then changes in place: the target's blocks and inode,
# and the refcount of its attribute block
"$ORLOV_LAYOUT" dump "$D/count.img" >"$D/count.dump"
x=$(sed -n 's|^/data ino=.* \(xattr=[0-9]*\) .*|\1|p' "$D/count.dump")
[ -n "$x" ] && grep -q "^/data/d1 .* $x " "$D/count.dump" ||
	t_fail "/data/d1 does not share /data's attribute block"
run ext2-kill kill "$kstride"
run ext2-inplace-kill inplace "$kstride"
run ext2-eio ipeio "$stride"
run ext2-eioread eioread "$stride"
run ext2-undo undo "$kstride"
run ext2-atomic atomic "$kstride"
# and --atomic without a fault: committed, nothing left beside it
mkdir "$D/atomic"
cp "$D/base.img" "$D/atomic/img"
"$ORLOV_POPULATE" -q --atomic -t /data "$D/atomic/img" "$D/new" || t_fail "--atomic run"
t_fsck "$D/atomic/img"
"$ORLOV_LAYOUT" dump "$D/atomic/img" | cmp -s - "$D/count.dump" ||
	t_fail "--atomic: not the layout of the run in place"
[ "$(ls -A "$D/atomic")" = img ] || t_fail "--atomic left $(ls -A "$D/atomic")"

# ext4's driver with dir_index: the target, one full block of names,
# becomes an htree (its block 0 rewritten in place as the root).
t_mkimage "$D/base.img" 16M -t ext2 -b 1024 -N 2048 -I 256 -O dir_index
tune2fs -o acl "$D/base.img" >/dev/null
echo "--driver ext4" >"$D/extra_args"
scenario
debugfs -R "stat /data" "$D/count.img" 2>/dev/null | grep -q 'Flags: 0x1000$' ||
	t_fail "/data did not become an htree"
run ext4-htree-kill kill "$kstride"
run ext4-htree-inplace-kill inplace "$kstride"
run ext4-htree-eio ipeio "$stride"
run ext4-htree-eioread eioread "$stride"

# ext3: the commit is one transaction of the image's journal.
t_mkimage "$D/base.img" 16M -t ext3 -b 1024 -N 2048
tune2fs -o acl "$D/base.img" >/dev/null
: >"$D/extra_args"
scenario
"$ORLOV_LAYOUT" dump "$D/count.img" >"$D/count.dump"
jseq() { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Journal sequence: *//p'; }
[ $(($(jseq "$D/count.img"))) = $(($(jseq "$D/base.img") + 1)) ] ||
	t_fail "ext3: the commit did not go through the journal"
run ext3-journal-kill jkill "$kstride"
run ext3-journal-eio eio "$stride"

# metadata_csum through the ext4 driver, the groups' lazy init kept as the
# kernel keeps it (the descriptors are checksummed).  ext3 with its
# journal's checksums v3 on, as a mount -t ext4 leaves it: the commit is a
# checksummed transaction, the superblock written whole (a kill between
# its changed bytes and its checksum would leave it invalid); and ext2 in
# place.
t_mkimage "$D/base.img" 16M -t ext3 -b 1024 -N 2048 -I 256 -O metadata_csum
tune2fs -o acl "$D/base.img" >/dev/null
printf 'jo -c\njc\n' | debugfs -w -f - "$D/base.img" >/dev/null 2>&1
dumpe2fs -h "$D/base.img" 2>/dev/null | grep -q '^Journal features:.*journal_checksum_v3' ||
	t_fail "ext3 metadata_csum: the journal has no checksums v3"
echo "--driver ext4" >"$D/extra_args"
scenario
"$ORLOV_LAYOUT" dump "$D/count.img" >"$D/count.dump"
[ $(($(jseq "$D/count.img"))) = $(($(jseq "$D/base.img") + 1)) ] ||
	t_fail "ext3 metadata_csum: the commit did not go through the journal"
run ext3-csum-journal-kill jkill "$kstride"
run ext3-csum-journal-eio eio "$stride"
t_mkimage "$D/base.img" 16M -t ext2 -b 1024 -N 2048 -I 256 -O metadata_csum
tune2fs -o acl "$D/base.img" >/dev/null
scenario
run ext2-csum-inplace-kill inplace "$kstride"
run ext2-csum-eio ipeio "$stride"

# ext4 as mke2fs -t ext4 makes it (extents, flex_bg, 64bit, metadata_csum;
# the image's default: the ext4 driver, delayed allocation): the commit is
# one transaction of its journal (as mke2fs leaves it: 32-bit tags, no
# checksums; t-ext4-commit.sh has the mounted journal's 64-bit tags and
# checksums v3), and without a journal in place.  Every fourth operation.
t_mkimage "$D/base.img" 16M -t ext4 -b 1024 -N 2048
tune2fs -o acl "$D/base.img" >/dev/null
: >"$D/extra_args"
scenario
"$ORLOV_LAYOUT" dump "$D/count.img" >"$D/count.dump"
debugfs -R "stat /data/d1/e/g20" "$D/count.img" 2>/dev/null | grep -q 'Flags: 0x80000$' ||
	t_fail "ext4: /data/d1/e/g20 is not extent-mapped"
[ $(($(jseq "$D/count.img"))) = $(($(jseq "$D/base.img") + 1)) ] ||
	t_fail "ext4: the commit did not go through the journal"
run ext4-journal-kill jkill "$((kstride * 4))"
run ext4-journal-eio eio "$((stride * 4))"
t_mkimage "$D/base.img" 16M -t ext4 -b 1024 -N 2048 -O ^has_journal
tune2fs -o acl "$D/base.img" >/dev/null
scenario
run ext4-nojournal-inplace-kill inplace "$((kstride * 4))"
run ext4-nojournal-eio ipeio "$((stride * 4))"

# ext3 whose journal (1,024 blocks, mke2fs's least) is too short for a
# commit that touches 1,100 inode table blocks: the commit goes to a copy.
t_mkimage "$D/base.img" 16M -t ext3 -b 1024 -I 128 -N 12000 -J size=1
tune2fs -o acl "$D/base.img" >/dev/null
: >"$D/extra_args"
T_MANY=8400 scenario
"$ORLOV_LAYOUT" dump "$D/count.img" >"$D/count.dump"
[ $(($(jseq "$D/count.img"))) = $(($(jseq "$D/base.img"))) ] ||
	t_fail "ext3, short journal: the commit went through the journal"
# Its points read those 9,320 entries from a tar, not by walking them (two
# thirds of a point's time): the same operations and reads, the same
# image; the scenarios above keep the directory walk under faults.
(cd "$D/new" && tar --sparse --xattrs --xattrs-include='*' --acls --format=posix \
	-cf "$D/new.tar.tmp" .) || t_fail "tar of the new tree"
cp "$D/base.img" "$D/count-tar.img"
ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" -t /data --no-fsck "$D/count-tar.img" \
	"$D/new.tar.tmp" 2>"$D/count-tar" >/dev/null &&
	cmp -s "$D/count" "$D/count-tar" && cmp -s "$D/count.img" "$D/count-tar.img" ||
	t_fail "the tar of the new tree: not the same operations or image: $(cat "$D/count-tar")"
rm -f "$D/count-tar.img"
mv "$D/new.tar.tmp" "$D/new.tar"
big=$((stride * 20))
run ext3-copy-kill kill "$((kstride * 20))"
run ext3-copy-eio eio "$big"
