#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# same-images.sh [--heavy] [--keep] [--only REGEX] BASE [NEW]
#
# The check of a change that must not move anything (a restructure, an
# optimisation): builds commit BASE and NEW (a commit, or by default this
# working tree, built in _build), runs both on the same starting images and
# compares, byte for byte, every image, allocation trace and message.
#
# Cases: every case of the crosscheck corpus (tests/kernel/cases.list, the
# heavy one only with --heavy), each in five modes (ext2 driver; ext4 driver;
# ext4 with --delalloc; --policy oldalloc; ext4 driver on 2 CPUs with colour
# 3), the ext2 mode also --in-place and --dry-run; then the same tree from a
# tar archive, with a device table, merged into itself (--merge), an ext3
# image committed through its journal, --create of a fixed size and of
# auto size, --uid-map/--all-root/--root-attrs and --no-xattrs.
#
# BASE's build is cached in $ORLOV_CACHE/build-COMMIT.  Exit 0 when all are
# identical, 1 naming each case that differs, 2 on a usage or build error.
set -euo pipefail
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=1700000000
top=$(cd "$(dirname "$0")/.." && pwd)

heavy=no keep=false only=
while [ $# -gt 0 ]; do
	case $1 in
	--heavy) heavy=yes ;;
	--keep) keep=true ;;
	--only) only=$2; shift ;;
	-h|--help) sed -n '3,23p' "$0"; exit 0 ;;
	-*) echo "same-images: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 [--heavy] [--keep] [--only REGEX] BASE [NEW]" >&2; exit 2; }

# shellcheck source=../tests/kernel/lib.sh
. "$top/tests/kernel/lib.sh"
die() { echo "same-images: $*" >&2; exit 2; }

# build COMMIT: the directory of its built binaries (cached)
build_commit() {
	local sha dir tmp
	sha=$(git -C "$top" rev-parse --verify -q "$1^{commit}") || die "no commit $1"
	dir=$ORLOV_CACHE/build-$sha
	mkdir -p "$ORLOV_CACHE"
	exec 8>"$dir.lock"
	flock 8
	if [ ! -x "$dir/src/orlov-populate" ]; then
		tmp=$(mktemp -d "$ORLOV_CACHE/build-tmp.XXXXXX")
		git -C "$top" archive "$sha" | tar -x -C "$tmp"
		(cd "$tmp" && tools/build.sh _build >/dev/null) ||
			{ rm -rf "$tmp"; die "building $1 failed"; }
		rm -rf "$dir"
		mkdir -p "$dir/src"
		cp "$tmp/_build/src/orlov-populate" "$tmp/_build/src/orlov-layout" "$dir/src/"
		rm -rf "$tmp"
	fi
	exec 8>&-
	echo "$dir"
}

old=$(build_commit "$1")
if [ $# = 2 ]; then
	new=$(build_commit "$2")
else
	new=$("$top/tools/build.sh" _build) || die "building the working tree failed"
fi
echo "same-images: old $old, new $new" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/same-images.XXXXXX")
$keep || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/payload" "$work/base" "$work/old" "$work/new" "$work/log"
gentree=$(kt_gentree)

ncmp=0 ndiff=0 ncase=0
# run NAME BASEIMAGE SRC OPTION...: run both tools from copies of BASEIMAGE
# (cwd: old/ and new/, so messages name the same relative paths); compare
# exit status, output, trace and image
run() {
	local name=$1 base=$2 src=$3 side rc
	shift 3
	ncase=$((ncase + 1))
	for side in old new; do
		local bin=$old
		[ $side = new ] && bin=$new
		rm -f "$work/$side/$name.img"
		[ -z "$base" ] || cp --sparse=always "$base" "$work/$side/$name.img"
		rc=0
		(cd "$work/$side" &&
			"$bin/src/orlov-populate" --trace "$name.trace" "$@" \
				"$name.img" "$src" >"$name.out" 2>&1) || rc=$?
		echo "$rc" >>"$work/$side/$name.out"
		# the run's own duration is the one thing allowed to differ
		sed -i -E 's/[0-9]+\.[0-9]+ seconds/N seconds/' "$work/$side/$name.out"
	done
	local f
	for f in "$name.img" "$name.trace" "$name.out"; do
		[ -e "$work/old/$f" ] || [ -e "$work/new/$f" ] || continue
		ncmp=$((ncmp + 1))
		if ! cmp -s "$work/old/$f" "$work/new/$f"; then
			echo "same-images: DIFFERS: $f ($*)"
			ndiff=$((ndiff + 1))
		fi
	done
	rm -f "$work/old/$name.img" "$work/new/$name.img"
}

kt_read_cases "$top/tests/kernel/cases.list" "$only" "$heavy"
for i in "${!names[@]}"; do
	n=${names[$i]}
	src=$work/payload/$n
	# shellcheck disable=SC2086
	"$gentree" ${gargs[$i]} "$src" >/dev/null || die "$n: gentree failed"
	base=$work/base/$n.img
	kt_base_image "$i" "$base" /t/u "$work/log/$n.mke2fs" "$work/prefill" "$src"
	common=(--target /t/u --block-colour "${colours[$i]}" ${merges[$i]})
	run "$n-ext2" "$base" "$src" "${common[@]}"
	run "$n-ext2-inplace" "$base" "$src" "${common[@]}" --in-place
	run "$n-ext2-dry" "$base" "$src" "${common[@]}" --dry-run
	run "$n-ext4" "$base" "$src" "${common[@]}" --driver ext4
	run "$n-ext4-delalloc" "$base" "$src" "${common[@]}" --driver ext4 --delalloc
	run "$n-oldalloc" "$base" "$src" "${common[@]}" --policy oldalloc
	run "$n-ext4-smp" "$base" "$src" --target /t/u --block-colour 3 ${merges[$i]} \
		--driver ext4 --cpus 2
	rm -f "$base"
	[ -n "${merges[$i]}" ] || [ "$i" -lt 3 ] || rm -rf "$src"
done

if [ -z "$only" ]; then
	# the builder's forms, on the first case's tree
	src=$work/payload/${names[0]}
	mke2fs -F -q -t ext2 -b 1024 -I 256 -U "$KT_UUID" \
		-E "hash_seed=$KT_UUID,root_owner=0:0" "$work/base/ext2.img" 64M
	mke2fs -F -q -t ext3 -b 2048 -I 256 -U "$KT_UUID" \
		-E "hash_seed=$KT_UUID,root_owner=0:0" "$work/base/ext3.img" 96M
	tar -C "$src" --sort=name --format=pax --mtime=@1700000000 -cf "$work/tree.tar" .
	run tar "$work/base/ext2.img" "$work/tree.tar"
	run tar-ext4 "$work/base/ext2.img" "$work/tree.tar" --driver ext4
	cat >"$work/devtable" <<-'EOF'
	/dev		d	755	0	0	-	-	-	-	-
	/dev/console	c	600	0	0	5	1	-	-	-
	/dev/tty	c	666	0	5	5	0	-	-	-
	/dev/hda	b	640	0	6	3	0	0	-	-
	/dev/ttyS	c	640	0	5	4	64	1	0	4
	/run		d	755	0	0	-	-	-	-	-
	/run/fifo	p	600	0	0	-	-	-	-	-
	EOF
	run devtable "$work/base/ext2.img" "$src" --devtable "$work/devtable"
	run ext3-journal "$work/base/ext3.img" "$src"
	run ext3-ext4 "$work/base/ext3.img" "$src" --driver ext4
	# --merge of a tree into an image that holds it already
	cp --sparse=always "$work/base/ext2.img" "$work/base/merge.img"
	"$old/src/orlov-populate" -q "$work/base/merge.img" "$src" >/dev/null 2>&1 ||
		die "populating the merge base failed"
	run merge-again "$work/base/merge.img" "$src" --merge
	run create-64m "" "$src" --create 64M --block-size 1024
	run create-auto "" "$src" --create auto+10% --fs-type ext3
	run create-ext4 "" "$src" --create auto --driver ext4 --inodes 4096
	run owners "$work/base/ext2.img" "$src" --uid-map 0:1000:10 --gid-map 0:2000 \
		--root-owner 7:8 --root-attrs
	run all-root "$work/base/ext2.img" "$src" --all-root --no-xattrs
fi

echo "same-images: $ncase runs, $ncmp files compared, $ndiff differ"
[ "$ndiff" = 0 ]
