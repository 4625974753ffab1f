#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# guest-verify.sh - check an offline-populated image with the real kernel.
#
# Usage:
#   tests/kernel/guest-verify.sh [--target PATH] [--fstype ext2|ext3|ext4]
#       [--no-modify] [--recover] [--keep DIR] IMAGE SRC
#
# IMAGE holds a copy of the tree SRC at PATH (default /).  Before booting,
# the host checks IMAGE with e2fsck -fn and records SRC: its manifest
# (tests/kernel/replay) and the sha256 of every regular file (computed with
# the same static busybox that runs in the guest).  In the guest the
# kernel mounts IMAGE (-t FSTYPE, default ext2) and
#   - lists PATH with `replay manifest` (types, modes, owners, sizes, symlink
#     targets, hard links) - must equal SRC's, data extents aside;
#   - sha256sums every regular file - must equal SRC's;
#   - unless --no-modify: creates files and directories (small, multi-block,
#     sparse, symlinks, hard links), copies part of the tree, deletes some of
#     the offline-created entries and some of its own, then umounts.
# Afterwards the host runs e2fsck -fn on IMAGE again.  IMAGE is modified
# (use a copy).  Exit 0 ok, 1 failure, 77 QEMU missing.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

target=/ fstype=ext2 modify=true keep= recover=false
while [ $# -gt 0 ]; do
	case $1 in
	--target) target=$2; shift ;;
	--fstype) fstype=$2; shift ;;
	--no-modify) modify=false ;;
	--recover) recover=true ;;
	--keep) keep=$2; shift ;;
	-h|--help) sed -n '3,24p' "$0"; exit 0 ;;
	-*) echo "guest-verify.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# = 2 ] || { echo "usage: guest-verify.sh [--target PATH] [--fstype T] [--no-modify] IMAGE SRC" >&2; exit 2; }
image=$1 src=$2
[ -f "$image" ] || kt_die "no image $image"
[ -d "$src" ] || kt_die "no source dir $src"
case $target in /*) ;; *) target=/$target ;; esac

kt_require_qemu
kernel=$(kt_kernel) || exit 1
replay=$(kt_replay) || exit 1
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && file_is_static "$b"; then busybox=$b; break; fi
done
[ -n "$busybox" ] || { kt_install busybox-static || true; busybox=/bin/busybox; }

kt_workdir "$keep" payload res

fail() { echo "FAIL: $*"; exit 1; }

# --recover: IMAGE's journal holds a committed transaction (a run killed
# after its commit record): the kernel replays it at mount, so the host
# may not check the image first.
if ! $recover && ! e2fsck -fn "$image" >"$work/fsck-before.log" 2>&1; then
	tail -n 20 "$work/fsck-before.log"
	fail "e2fsck -fn of the offline image is not clean (before boot)"
fi

strip_extents() { awk '$1 == "f" { $7 = "" } { print }'; }
"$replay" manifest "$src" | strip_extents >"$work/manifest.src" ||
	fail "replay manifest $src"
(cd "$src" && "$busybox" find . -type f -exec "$busybox" sha256sum {} + |
	LC_ALL=C sort) >"$work/sha.src" || fail "sha256 of $src"

cat >"$work/guest.sh" <<EOF
fstype=$fstype
target='/mnt$target'
modify=$modify
EOF
cat >>"$work/guest.sh" <<'EOF'
mount -t "$fstype" /dev/vda /mnt || { echo "mount failed"; exit 10; }
cd "$target" || { echo "no target $target"; exit 11; }
replay manifest . >/results/manifest || exit 12
find . -type f -exec sha256sum {} + | sort >/results/sha || exit 13
rc=0
if $modify; then
	set -e
	mkdir .gv
	i=0
	while [ $i -lt 60 ]; do
		dd if=/dev/urandom of=.gv/f$i bs=1024 count=$(( (i * 37) % 300 )) 2>/dev/null
		i=$((i + 1))
	done
	dd if=/dev/urandom of=.gv/sparse bs=4096 seek=5000 count=3 2>/dev/null
	mkdir -p .gv/d/e/f
	ln -s ../../f1 .gv/d/e/fast
	ln -s "$(printf '%0300d' 0)" .gv/d/slow
	ln .gv/f7 .gv/d/hard
	# copy a slice of the offline tree, with the kernel allocating
	n=0
	for e in *; do
		case $e in .gv|lost+found) continue ;; esac
		cp -a "$e" .gv/d/ 2>/dev/null || true
		n=$((n + 1)); [ $n -ge 5 ] && break
	done
	# delete some offline-created entries (every third top-level one)
	n=0
	for e in *; do
		case $e in .gv|lost+found) continue ;; esac
		n=$((n + 1))
		[ $((n % 3)) = 0 ] && rm -rf "$e"
	done
	# and some of our own
	rm -f .gv/f1 .gv/f2 .gv/f30 .gv/sparse
	rm -rf .gv/d/e
	set +e
	sync
	echo "modify done"
fi
cd /
umount /mnt || { echo "umount failed"; exit 14; }
exit $rc
EOF
cp "$work/guest.sh" "$work/payload/guest.sh"   # for the record

"$kt_here/run-guest.sh" -k "$kernel" -p "$work/payload" -s "$work/guest.sh" \
	-d "$image" -r "$work/res" -o "$work/guest.out" -l "$work/console.log" \
	-t 900 -b 180
grc=$?
[ $grc = 77 ] && exit 77
if [ $grc != 0 ]; then
	sed 's/^/# /' "$work/guest.out" | tail -n 20
	fail "guest script rc=$grc"
fi

ok=true
# mke2fs's lost+found is not part of SRC when the target is the root
if [ "$target" = / ] && [ ! -e "$src/lost+found" ]; then
	grep -v '^d [0-7]* [0-9]* [0-9]* lost+found$' "$work/res/manifest" >"$work/res/manifest.tmp"
	mv "$work/res/manifest.tmp" "$work/res/manifest"
fi
if ! strip_extents <"$work/res/manifest" | diff -u "$work/manifest.src" - >"$work/manifest.diff"; then
	echo "# tree seen by the kernel differs from SRC:"
	head -n 20 "$work/manifest.diff" | sed 's/^/# /'
	ok=false
fi
if ! diff -u "$work/sha.src" "$work/res/sha" >"$work/sha.diff"; then
	echo "# file contents seen by the kernel differ from SRC:"
	head -n 20 "$work/sha.diff" | sed 's/^/# /'
	ok=false
fi
if ! e2fsck -fn "$image" >"$work/fsck-after.log" 2>&1; then
	echo "# e2fsck -fn after the kernel's changes:"
	tail -n 20 "$work/fsck-after.log" | sed 's/^/# /'
	ok=false
fi
$ok || fail "guest verification of $image"
extra=
$modify && extra="; kernel changes fsck-clean"
echo "PASS: $(grep -c . "$work/manifest.src") entries, $(grep -c . "$work/sha.src") files verified by the kernel$extra"
