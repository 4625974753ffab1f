# SPDX-License-Identifier: GPL-2.0-or-later
# Shared host side of bench/aging.sh and bench/guest-traversal.sh (sourced
# by bash, not executed).  See bench/aging.sh for what is measured.
#
# Environment honoured: ORLOV_CACHE (trees, agetool, the kernel),
# ORLOV_KERNEL (a bzImage instead of kernel/build-kernel.sh --stock),
# AGING_SUBSET / AGING_ROUNDS (override the tree subset, a comma list of
# top-level directories of the kernel source, and the round count),
# TMPDIR, ORLOV_SKIP_KERNEL_TESTS=1 (exit 77).

bg_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bg_bench=$(cd "$bg_here/.." && pwd)
bg_top=$(cd "$bg_bench/.." && pwd)
export LC_ALL=C TZ=UTC
export E2FSPROGS_FAKE_TIME=1700000000 SOURCE_DATE_EPOCH=1700000000
export PATH=$PATH:/usr/sbin:/sbin
ORLOV_CACHE=${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}
export ORLOV_CACHE
BG_UUID=0b0e1c4e-5eed-4b1e-9c0d-000000000011
BG_HASH_SEED=6e0b1a2c-0000-4d1e-8a5e-000000000011
# one geometry for every image: ext2, 4 KiB blocks, 256-byte inodes
# (the pinned mke2fs.conf of tests/kernel), 2 GiB (16 groups), 65536 inodes
BG_BLOCKS=524288
BG_INODES=65536
BG_TOOLS="orlov mke2fs-d genext2fs kernel"

bg_prog=${0##*/}
bg_log() { echo "$bg_prog: $*" >&2; }
bg_die() { echo "$bg_prog: error: $*" >&2; exit 1; }
bg_skip() { echo "$*"; exit 77; }

# bg_args "$@": --tool --layout --out [--quick] [--keep] [--fs ext2|ext4]
bg_args() {
	tool= layout= out= quick=0 keep=0
	BG_FS=ext2
	while [ $# -gt 0 ]; do
		case $1 in
		--tool) tool=$2; shift ;;
		--layout) layout=$2; shift ;;
		--out) out=$2; shift ;;
		--quick) quick=1 ;;
		--keep) keep=1 ;;
		--fs) BG_FS=$2; shift ;;
		-h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0 ;;
		*) echo "$bg_prog: unknown argument $1" >&2; exit 2 ;;
		esac
		shift
	done
	[ -n "$tool" ] && [ -n "$layout" ] && [ -n "$out" ] ||
		{ echo "usage: $bg_prog --tool PATH --layout PATH --out DIR [--quick]" >&2; exit 2; }
	case $BG_FS in ext2|ext4) ;; *) bg_die "--fs: ext2 or ext4, not $BG_FS" ;; esac
	[ -x "$tool" ] || bg_die "no orlov-populate at $tool"
	[ -x "$layout" ] || bg_die "no orlov-layout at $layout"
	tool=$(cd "$(dirname "$tool")" && pwd)/${tool##*/}
	layout=$(cd "$(dirname "$layout")" && pwd)/${layout##*/}
	mkdir -p "$out" || exit 1
	out=$(cd "$out" && pwd)
	# the subset of the Linux tree and the rounds (measured under TCG on
	# 2 cores, see bench/aging.sh)
	if [ $quick = 1 ]; then
		subset=${AGING_SUBSET:-fs}
		rounds=${AGING_ROUNDS:-2}
	else
		subset=${AGING_SUBSET:-fs,kernel,include,net,sound,mm,lib,crypto,block,security}
		rounds=${AGING_ROUNDS:-4}
	fi
}

bg_have_pkg_file() { # VER: the source tarball, installed when root
	local f=/usr/src/linux-source-$1.tar.xz
	[ -f "$f" ] && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		bg_log "installing linux-source-$1"
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q "linux-source-$1" ||
		  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "linux-source-$1"; }; } >&2
	fi
	[ -f "$f" ]
}

# bg_setup NEED_612: dependencies (exit 77 with a reason when missing),
# kernel, replay, agetool, scratch directory $work, the qemu wrapper
bg_setup() {
	[ "${ORLOV_SKIP_KERNEL_TESTS:-0}" = 0 ] && [ "${BENCH_SKIP_QEMU:-0}" = 0 ] ||
		bg_skip "ORLOV_SKIP_KERNEL_TESTS is set"
	command -v qemu-system-x86_64 >/dev/null ||
		bg_skip "qemu-system-x86_64 is not installed (package qemu-system-x86)"
	local c
	for c in mke2fs dumpe2fs e2fsck python3 gcc cpio; do
		command -v $c >/dev/null || bg_skip "$c is not installed"
	done
	bg_have_pkg_file 6.1 ||
		bg_skip "no /usr/src/linux-source-6.1.tar.xz (apt-get install linux-source-6.1 as root)"
	if [ "$1" = 1 ]; then
		bg_have_pkg_file 6.12 ||
			bg_skip "no /usr/src/linux-source-6.12.tar.xz (apt-get install linux-source-6.12 as root)"
	fi
	# the qemu harness (the pinned mke2fs.conf, replay, the kernel)
	. "$bg_top/tests/kernel/lib.sh"
	export E2FSPROGS_FAKE_TIME=1700000000
	if [ -n "${ORLOV_KERNEL:-}" ]; then
		kernel=$ORLOV_KERNEL
	else
		kernel=$("$bg_top/kernel/build-kernel.sh" --stock) ||
			bg_skip "the stock guest kernel could not be built (kernel/build-kernel.sh --stock)"
	fi
	replay=$(kt_replay) || bg_die "cannot build replay"
	local h
	h=$(sha256sum "$bg_here/agetool.c" | cut -c1-16)
	agetool=$ORLOV_CACHE/agetool-$h
	if [ ! -x "$agetool" ]; then
		mkdir -p "$ORLOV_CACHE"
		gcc -static -O2 -Wall -Wno-format-truncation -o "$agetool.tmp.$$" "$bg_here/agetool.c" >&2 ||
			bg_skip "cannot build a static agetool (gcc and a static libc needed)"
		mv -f "$agetool.tmp.$$" "$agetool"
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/orlov-guestbench.XXXXXX") || exit 1
	if [ "$keep" = 1 ]; then
		trap 'bg_log "kept $work"' EXIT
	else
		trap 'rm -rf "$work"' EXIT
	fi
	trap 'exit 130' INT TERM
	# qemu with the virtio-blk request trace: run-guest.sh calls
	# qemu-system-x86_64 from PATH; this one adds the trace event (log
	# backend, one line per guest read request) written to $BG_TRACE
	mkdir -p "$work/qbin" "$work/trace" "$work/logs"
	cat >"$work/qbin/qemu-system-x86_64" <<EOF
#!/bin/sh
exec $(command -v qemu-system-x86_64) -trace enable=virtio_blk_handle_read -D "\$BG_TRACE" "\$@"
EOF
	chmod 755 "$work/qbin/qemu-system-x86_64"
	# markers beyond 2 GiB (bench/guest/traverse-guest.sh)
	truncate -s 3G "$work/marker.img"
}

# bg_tree VER: the subset of linux-source-VER, cached in ORLOV_CACHE
bg_tree() {
	local v=$1 key d dirs=() x tb=/usr/src/linux-source-$1.tar.xz
	# the tarball's size and mtime too: a new package version is a new tree
	key=$(echo "$subset" | tr , _)-$(stat -c %s-%Y "$tb")
	d=$ORLOV_CACHE/bench-trees/linux-$v-$key
	mkdir -p "$ORLOV_CACHE/bench-trees"
	# concurrent runs wait for one extraction
	exec 8>"$d.lock"
	flock 8
	if [ ! -f "$d.done" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		for x in $(echo "$subset" | tr , ' '); do dirs+=("linux-source-$v/$x"); done
		bg_log "extracting ${dirs[*]} from linux-source-$v.tar.xz"
		tar -xJf "/usr/src/linux-source-$v.tar.xz" -C "$d" --strip-components=1 \
			"${dirs[@]}" >&2 || bg_die "cannot extract $subset from linux-source-$v"
		touch "$d.done"
	fi
	echo "$d"
}

bg_mkfs() { # IMAGE [mke2fs options]
	local img=$1
	shift
	rm -f "$img"
	if [ "$BG_FS" = ext4 ]; then
		# Debian 12's ext4 features from the tree's mke2fs.conf (the
		# pinned one of tests/kernel has the ext2 geometry only), the
		# lazy itable init that mke2fs would choose on a current host
		MKE2FS_CONFIG=$bg_top/images/mke2fs.conf \
		mke2fs -F -q -t ext4 -b 4096 -N $BG_INODES -U $BG_UUID \
			-E hash_seed=$BG_HASH_SEED,root_owner=0:0,lazy_itable_init=1 "$@" "$img" $BG_BLOCKS >&2
		return
	fi
	mke2fs -F -q -t ext2 -b 4096 -N $BG_INODES -U $BG_UUID \
		-E hash_seed=$BG_HASH_SEED,root_owner=0:0 "$@" "$img" $BG_BLOCKS >&2
}

# bg_fs_text: how this run's images differ from the ext2 geometry that the
# method text describes (empty for ext2)
bg_fs_text() {
	[ "$BG_FS" = ext4 ] || return 0
	echo "**ext4 images** (\`--fs ext4\`): the same geometry made by \`mke2fs -t ext4\` with the tree's images/mke2fs.conf (Debian 12's features: has_journal, extent, huge_file, flex_bg, metadata_csum, 64bit, dir_nlink, extra_isize; lazy_itable_init=1); orlov-populate with its default for them (the ext4 driver, delayed allocation), \`mke2fs -t ext4 -d\`, no genext2fs (ext2 only); the guest mounts them \`-t ext4\` (the same stock 6.1 kernel, its ext4 driver with default options) for the replay, the aging rounds and the traversals. Where the text below says ext2, read ext4."
}

# bg_images SRC DIR: DIR/TOOL.img for every tool; kernel.img is the empty
# image the guest fills with replay run (bg_boot ... with kernel replay)
bg_images() {
	local src=$1 d=$2
	mkdir -p "$d"
	bg_mkfs "$d/kernel.img" || bg_die "mke2fs failed"
	cp --sparse=always "$d/kernel.img" "$d/orlov.img"
	"$tool" "$d/orlov.img" "$src" >&2 || bg_die "orlov-populate failed"
	bg_mkfs "$d/mke2fs-d.img" -d "$src" || bg_die "mke2fs -d failed"
	if [ "$BG_FS" = ext2 ] && command -v genext2fs >/dev/null; then
		rm -f "$d/genext2fs.img"
		genext2fs -B 4096 -b $BG_BLOCKS -N $BG_INODES -z -d "$src" "$d/genext2fs.img" >&2 ||
			bg_die "genext2fs failed"
		tune2fs -U $BG_UUID "$d/genext2fs.img" >/dev/null 2>&1 || true
	fi
}

# bg_tools_present DIR: the tools whose image exists (kernel always)
bg_tools_present() {
	local t r=
	for t in $BG_TOOLS; do
		[ "$t" = kernel ] || [ -f "$1/$t.img" ] && r="$r $t"
	done
	echo $r
}

# bg_boot NAME PAYLOAD GUESTSCRIPT IMAGE...: one guest run; the marker
# disk is attached last; the trace goes to $work/trace/NAME.log, the
# results to $work/res/NAME, the console to $work/logs/NAME.out
bg_boot() {
	local name=$1 payload=$2 gs=$3 disks=() i
	shift 3
	for i in "$@"; do disks+=(-d "$i"); done
	disks+=(-d "$work/marker.img")
	cp "$bg_here/traverse-guest.sh" "$payload/traverse-guest.sh"
	cp "$agetool" "$payload/agetool"
	rm -rf "$work/res/$name"
	mkdir -p "$work/res"
	local t0 rc
	t0=$(date +%s)
	BG_TRACE=$work/trace/$name.log PATH=$work/qbin:$PATH \
		"$bg_top/tests/kernel/run-guest.sh" -k "$kernel" -p "$payload" -s "$gs" \
		"${disks[@]}" -r "$work/res/$name" -o "$work/logs/$name.out" \
		-l "$work/logs/$name.console" -t "${BG_BOOT_TIMEOUT:-1500}" -b 300 \
		2>"$work/logs/$name.err"
	rc=$?
	bg_log "guest $name: rc=$rc in $(( $(date +%s) - t0 )) s"
	if [ $rc = 77 ]; then bg_skip "run-guest.sh: $(tail -1 "$work/logs/$name.err")"; fi
	if [ $rc != 0 ]; then
		tail -n 20 "$work/logs/$name.err" "$work/logs/$name.out" >&2
		bg_die "guest run $name failed (rc=$rc)"
	fi
}

# bg_model IMAGE JSON: the modelled traversal (bench/layout.py metrics)
bg_model() {
	"$layout" dump "$1" >"$work/dump" 2>"$work/dump.err" &&
		dumpe2fs "$1" >"$work/dumpe2fs" 2>/dev/null &&
		python3 "$bg_bench/layout.py" metrics "$work/dump" "$work/dumpe2fs" >"$2" ||
		bg_die "no layout metrics of $1 ($(head -c 300 "$work/dump.err"))"
	rm -f "$work/dump" "$work/dumpe2fs"
}

bg_fsck() { # IMAGE LABEL: e2fsck -fn, a note when unclean
	e2fsck -fn "$1" >"$work/logs/fsck.$2.log" 2>&1 ||
		echo "- e2fsck -fn reports problems in the $2 image" >>"$work/notes"
}
