# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the tests/kernel/ scripts (sourced, not executed).
#
# Environment honoured:
#   srcdir, top_srcdir, top_builddir   as set by automake (fallbacks below)
#   ORLOV_CACHE       cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate)
#   REPLAY            replay binary (default: build dir, else built on demand)
#   ORLOV_POPULATE    the tool (default $top_builddir/src/orlov-populate)
#   ORLOV_HOOKS_POPULATE  the tool with the test hooks (ORLOV_FAULT; default
#                     $top_builddir/tests/orlov-populate-hooks)
#   ORLOV_LAYOUT      the layout differ (default $top_builddir/src/orlov-layout)
#   ORLOV_KERNEL      a bzImage to use instead of kernel/build-kernel.sh's
#   ORLOV_KERNEL_MODE stock (default) or patched, or debian: Debian's own
#                     kernel (kernel/debian-kernel.sh; SMP, modular: boot
#                     it with run-guest.sh -M "$(kt_kernel_moddir KERNEL)")
#   ORLOV_KERNEL_SMP=1  the --smp build of that kernel
#   ORLOV_KERNEL_SOURCE the source version of that kernel (default 6.1) (not for debian)
#   ORLOV_DEBIAN_PACKAGE  with debian: that linux-image package of the line
#                     (debian-kernel.sh --package), not the metapackage's
#   ORLOV_TOOL_KERNEL the tool's --kernel in crosscheck.sh (default: the
#                     line, 6.1 or 6.12), e.g. 6.1.170 for that package
#   ORLOV_ARCH        the guest's architecture: amd64 (default;
#                     qemu-system-x86_64) or arm64 (qemu-system-aarch64 -M
#                     virt: Debian's arm64 kernel, debian mode only, with
#                     the replayer cross-built and busybox-static:arm64)
#   ORLOV_SKIP_KERNEL_TESTS=1  skip everything that boots QEMU (exit 77)

export LC_ALL=C TZ=UTC
export E2FSPROGS_FAKE_TIME=${E2FSPROGS_FAKE_TIME:-1700000000}

kt_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=${top_builddir:-$top_srcdir}
top_builddir=$(cd "$top_builddir" && pwd)
ORLOV_CACHE=${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}
export ORLOV_CACHE

# kt_set_arch ARCH: the guest's architecture, its QEMU and that QEMU's package
kt_set_arch() {
	case $1 in
	amd64) kt_qemu=qemu-system-x86_64 kt_qemu_pkg=qemu-system-x86 ;;
	arm64) kt_qemu=qemu-system-aarch64 kt_qemu_pkg=qemu-system-arm ;;
	*) echo "${0##*/}: error: architecture $1: amd64 or arm64" >&2; exit 1 ;;
	esac
	kt_arch=$1
	export ORLOV_ARCH=$1
}
kt_set_arch "${ORLOV_ARCH:-amd64}"

kt_log() { echo "${0##*/}: $*" >&2; }
kt_die() { echo "${0##*/}: error: $*" >&2; exit 1; }
kt_skip() { echo "${0##*/}: skipped: $*"; exit 77; }

# install Debian packages if a command is missing (root or sudo only)
kt_need() { # kt_need CMD PKG [CMD PKG]...
	local missing=()
	while [ $# -ge 2 ]; do
		command -v "$1" >/dev/null 2>&1 || missing+=("$2")
		shift 2
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	kt_install "${missing[@]}"
}

# install Debian packages unconditionally (root or sudo only)
kt_install() {
	local sudo=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || return 1
		sudo=sudo
	fi
	kt_log "installing $*"
	$sudo apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@" >&2
}

# QEMU present (installing it when we can)?  Skip (77) otherwise.
kt_require_qemu() {
	[ "${ORLOV_SKIP_KERNEL_TESTS:-0}" = 0 ] ||
		kt_skip "ORLOV_SKIP_KERNEL_TESTS is set"
	kt_need "$kt_qemu" "$kt_qemu_pkg" || true
	command -v "$kt_qemu" >/dev/null 2>&1 ||
		kt_skip "$kt_qemu not available"
}

# path of a static replay binary, building it if needed
kt_replay() {
	if [ -n "${REPLAY:-}" ]; then
		[ -x "$REPLAY" ] || kt_die "REPLAY=$REPLAY is not executable"
		echo "$REPLAY"; return
	fi
	if [ -x "$top_builddir/tests/kernel/replay" ] &&
		[ "$top_builddir/tests/kernel/replay" -nt "$kt_here/replay.c" ] &&
		file_is_static "$top_builddir/tests/kernel/replay"; then
		echo "$top_builddir/tests/kernel/replay"; return
	fi
	local h out
	h=$(sha256sum "$kt_here/replay.c" | cut -c1-16)
	out=$ORLOV_CACHE/replay-$h
	if [ ! -x "$out" ]; then
		mkdir -p "$ORLOV_CACHE"
		kt_need gcc gcc >&2 || true
		gcc -static -O2 -Wall -o "$out.tmp.$$" "$kt_here/replay.c" >&2 ||
			kt_die "cannot build replay (needs gcc + libc6-dev static libc)"
		mv -f "$out.tmp.$$" "$out"
	fi
	echo "$out"
}

# path of the replayer the guest runs: kt_replay's for amd64, for arm64 a
# static one cross-built with aarch64-linux-gnu-gcc (the replayer needs
# nothing but libc), cached by the source's hash
kt_guest_replay() {
	[ "$kt_arch" = arm64 ] || { kt_replay; return; }
	local h out cc=aarch64-linux-gnu-gcc
	h=$(sha256sum "$kt_here/replay.c" | cut -c1-16)
	out=$ORLOV_CACHE/replay-arm64-$h
	if [ ! -x "$out" ]; then
		mkdir -p "$ORLOV_CACHE"
		kt_need "$cc" gcc-aarch64-linux-gnu >&2 || true
		"$cc" -static -O2 -Wall -Wextra -o "$out.tmp.$$" "$kt_here/replay.c" >&2 ||
			kt_die "cannot build the arm64 replay (needs gcc-aarch64-linux-gnu and libc6-dev-arm64-cross)"
		mv -f "$out.tmp.$$" "$out"
	fi
	echo "$out"
}

# path of a static busybox for the guest: the host's for amd64; for arm64
# the busybox of busybox-static:arm64, downloaded once (apt-get download,
# never installed) into $ORLOV_CACHE/busybox-arm64-VERSION
kt_busybox() {
	local b
	if [ "$kt_arch" = amd64 ]; then
		for b in /bin/busybox /usr/bin/busybox; do
			if [ -x "$b" ] && file_is_static "$b" && "$b" --list 2>/dev/null | grep -qx sh; then
				echo "$b"; return
			fi
		done
		kt_install busybox-static >&2 || true
		file_is_static /bin/busybox || kt_die "need a static busybox (apt-get install busybox-static)"
		echo /bin/busybox
		return
	fi
	local ver dir d old
	ver=$(apt-cache policy busybox-static:arm64 2>/dev/null | sed -n 's/^ *Candidate: //p' | head -n1)
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		# offline, or the architecture not added: a cached one
		old=$(find "$ORLOV_CACHE" -mindepth 2 -maxdepth 2 -path '*/busybox-arm64-*/busybox' 2>/dev/null |
			sort -V | tail -n1)
		[ -n "$old" ] || kt_die "apt knows no busybox-static:arm64 (dpkg --add-architecture arm64; apt-get update) and none is cached"
		echo "$old"; return
	fi
	dir=$ORLOV_CACHE/busybox-arm64-${ver//:/_}
	if [ ! -x "$dir/busybox" ]; then
		mkdir -p "$ORLOV_CACHE"
		d=$(mktemp -d "$ORLOV_CACHE/busybox-arm64.tmp.XXXXXX") || kt_die "mktemp failed"
		(cd "$d" && apt-get download "busybox-static:arm64=$ver") >"$d/apt.log" 2>&1 &&
			dpkg-deb -x "$d"/busybox-static_*.deb "$d/root" ||
			{ cat "$d/apt.log" >&2; rm -rf "$d"; kt_die "cannot download busybox-static:arm64=$ver"; }
		mkdir -p "$dir"
		cp "$d/root/bin/busybox" "$dir/busybox.tmp.$$" && mv -f "$dir/busybox.tmp.$$" "$dir/busybox"
		rm -rf "$d"
	fi
	echo "$dir/busybox"
}

# path of the gentree generator, building it if needed
kt_gentree() {
	if [ -n "${GENTREE:-}" ]; then
		echo "$GENTREE"; return
	fi
	if [ -x "$top_builddir/tests/kernel/gentree" ] &&
		[ "$top_builddir/tests/kernel/gentree" -nt "$kt_here/gentree.c" ]; then
		echo "$top_builddir/tests/kernel/gentree"; return
	fi
	local h out
	h=$(sha256sum "$kt_here/gentree.c" | cut -c1-16)
	out=$ORLOV_CACHE/gentree-$h
	if [ ! -x "$out" ]; then
		mkdir -p "$ORLOV_CACHE"
		gcc -O2 -Wall -o "$out.tmp.$$" "$kt_here/gentree.c" >&2 ||
			kt_die "cannot build gentree"
		mv -f "$out.tmp.$$" "$out"
	fi
	echo "$out"
}

file_is_static() {
	# a static binary has no PT_INTERP; readelf may be missing, so be lax
	if command -v readelf >/dev/null 2>&1; then
		! readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
	else
		return 0
	fi
}

# path of the guest kernel
kt_kernel() {
	if [ -n "${ORLOV_KERNEL:-}" ]; then
		[ -f "$ORLOV_KERNEL" ] || kt_die "ORLOV_KERNEL=$ORLOV_KERNEL not found"
		echo "$ORLOV_KERNEL"; return
	fi
	if [ "${ORLOV_KERNEL_MODE:-stock}" = debian ]; then
		local d
		d=$("$top_srcdir/kernel/debian-kernel.sh" --arch "$kt_arch" \
			--line "${ORLOV_DEBIAN_LINE:-6.1}" \
			${ORLOV_DEBIAN_PACKAGE:+--package "$ORLOV_DEBIAN_PACKAGE"}) &&
			[ -f "$d/vmlinuz" ] ||
			kt_die "cannot fetch Debian's kernel (kernel/debian-kernel.sh failed)"
		echo "$d/vmlinuz"; return
	fi
	[ "$kt_arch" = amd64 ] ||
		kt_die "ORLOV_ARCH=$kt_arch: only Debian's kernel (ORLOV_KERNEL_MODE=debian) is built for it"
	local smp=
	[ "${ORLOV_KERNEL_SMP:-0}" = 0 ] || smp=--smp
	"$top_srcdir/kernel/build-kernel.sh" "--${ORLOV_KERNEL_MODE:-stock}" $smp \
		--source "${ORLOV_KERNEL_SOURCE:-6.1}" ||
		kt_die "kernel build failed"
}

# kt_kernel_moddir KERNEL: for ORLOV_KERNEL_MODE=debian, the directory of
# KERNEL's modules and load-order (run-guest.sh -M); nothing otherwise
kt_kernel_moddir() {
	[ "${ORLOV_KERNEL_MODE:-stock}" = debian ] || return 0
	local d
	d=$(cd "$(dirname "$1")" && pwd) || kt_die "no directory of $1"
	[ -f "$d/load-order" ] && [ -d "$d/modules" ] ||
		kt_die "no modules and load-order next to $1 (kernel/debian-kernel.sh makes them)"
	echo "$d"
}

# kt_layout_figures FILE: set p, si and sb to the paths, same_inode and
# same_blocks of the last summary line `orlov-layout diff` wrote to FILE
# (empty when it has none)
kt_layout_figures() {
	local summary
	summary=$(grep -o 'paths=[0-9]* same_inode=[0-9]* same_blocks=[0-9]*' \
		"$1" | tail -n1)
	p=$(sed -n 's/.*paths=\([0-9]*\).*/\1/p' <<<"$summary")
	si=$(sed -n 's/.*same_inode=\([0-9]*\).*/\1/p' <<<"$summary")
	sb=$(sed -n 's/.*same_blocks=\([0-9]*\).*/\1/p' <<<"$summary")
}

# ---- watching a guest's console ---------------------------------------------
# What a kernel prints when it will not finish by itself: a CPU stuck
# (soft or hard lockup), an RCU grace period stalled, a task blocked for
# minutes, a panic.  A guest that prints one is killed and retried at once
# (run-guest.sh) instead of waiting out its timeout: one Debian guest hung
# 1,500 s in soft lockups that way.  A guest that is only slow prints none
# of them (their thresholds are 20 s to 120 s with no progress at all), so
# there is no tighter timeout.  The texts are Linux 6.1's and 6.12's
# (kernel/watchdog.c, watchdog_hld.c, rcu/tree_stall.h, rcu/tree_exp.h,
# hung_task.c, panic.c), after the console's optional timestamp.
kt_console_fatal_re='watchdog: BUG: soft lockup - CPU#|watchdog: Watchdog detected hard LOCKUP'
kt_console_fatal_re=$kt_console_fatal_re'|rcu: INFO: [a-z_]+ (self-detected stall|detected (expedited )?stalls)'
kt_console_fatal_re=$kt_console_fatal_re'|INFO: task .*:[0-9]+ blocked for more than [0-9]+ seconds'
kt_console_fatal_re=$kt_console_fatal_re'|Kernel panic - not syncing'

# kt_console_fatal LOG: the first such line of LOG, from the message on
# (status 1 and nothing when there is none)
kt_console_fatal() {
	grep -a -m1 -o -E "($kt_console_fatal_re).*" "$1" 2>/dev/null |
		tr -d '\r' | cut -c1-160 | grep .
}

kt_tmpdir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/orlov-kt.XXXXXX") || kt_die "mktemp failed"
	echo "$d"
}

# kt_workdir KEEP SUBDIR...: set $work to KEEP (emptied) when given, else to
# a temporary directory removed on exit; create the subdirectories.
kt_workdir() {
	local keep=$1
	shift
	if [ -n "$keep" ]; then
		rm -rf "$keep" && mkdir -p "$keep" && work=$(cd "$keep" && pwd) ||
			kt_die "cannot use $keep"
	else
		work=$(kt_tmpdir)
		trap 'rm -rf "$work"' EXIT
	fi
	local d
	for d in "$@"; do mkdir -p "$work/$d"; done
}

# ---- the crosscheck corpus (cases.list) ------------------------------------------
export MKE2FS_CONFIG=$kt_here/mke2fs.conf
KT_UUID=6f726c6f-762d-706f-7075-6c6174650001
kt_letters=abcdefghijklmnopqrstuvwxyz

# kt_read_cases FILE ONLY_REGEX HEAVY(yes|no): fill the arrays names sizes
# gargs (gentree arguments) margs (mke2fs options) colours prefills
# targetacls merges (the options the tool and the replay both take:
# --merge, --casefold=PATH) ext4s measureds rotationals shms topdirs
# projinherits, and nheavy (heavy cases left out) and next4
# (cases left out that only the ext4 driver writes: kept when kt_driver
# is ext4).  Line format: see cases.list.
kt_read_cases() {
	local line left right opts n sz rest o colour prefill isheavy targetacl merge
	local isext4 shm topdir projinherit
	names=() sizes=() gargs=() margs=() colours=() prefills=() targetacls=()
	merges=() ext4s=() measureds=() rotationals=() shms=() topdirs=()
	projinherits=()
	nheavy=0 next4=0
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		[ -n "${line// /}" ] || continue
		IFS='|' read -r left right opts <<<"$line"
		[ -n "$right" ] || kt_die "bad case line: $line"
		read -r n sz rest <<<"$left"
		if [ -n "$2" ] && ! [[ $n =~ $2 ]]; then
			continue
		fi
		colour=0 prefill=0 isheavy=false targetacl= merge= isext4=false
		measured= rotational= shm=false topdir=false projinherit=
		for o in $opts; do
			case $o in
			merge) merge="$merge --merge" ;;
			# a directory made +F: the tool's option and the
			# replay's, one word each, with merge's
			casefold=?*) [[ ${o#casefold=} =~ ^[A-Za-z0-9_./-]+$ ]] ||
				kt_die "$n: bad $o"
				merge="$merge --$o" ;;
			ext4) isext4=true ;;
			colour=*) colour=${o#colour=} ;;
			prefill=*) prefill=${o#prefill=} ;;
			targetacl=base|targetacl=named) targetacl=${o#targetacl=} ;;
			heavy) isheavy=true ;;
			measured=?*) measured=${o#measured=} ;;
			# only on one kernel line and mount: "@LINE/FSTYPE WHY"
			measured@*/*=?*) measured="@${o%%=*} ${o#*=}"
				measured=${measured/@measured@/@} ;;
			rotational=no) rotational=no ;;
			shm) shm=true ;;
			topdir) topdir=true ;;
			projinherit=*) projinherit=${o#projinherit=}
				[[ $projinherit =~ ^[0-9]+$ ]] ||
					kt_die "$n: bad $o" ;;
			*) kt_die "$n: unknown case option $o" ;;
			esac
		done
		[[ $colour =~ ^([0-9]|1[0-5])$ ]] || kt_die "$n: bad colour=$colour"
		[[ $prefill =~ ^[0-9]+$ ]] || kt_die "$n: bad prefill=$prefill"
		if $isheavy && [ "$3" = no ]; then
			nheavy=$((nheavy + 1))
			continue
		fi
		if $isext4 && [ "${kt_driver:-ext2}" != ext4 ]; then
			next4=$((next4 + 1))
			continue
		fi
		names+=("$n"); sizes+=("$sz"); gargs+=("$rest"); margs+=("$right")
		colours+=("$colour"); prefills+=("$prefill"); targetacls+=("$targetacl")
		merges+=("$merge"); ext4s+=("$isext4"); measureds+=("$measured")
		rotationals+=("$rotational"); shms+=("$shm"); topdirs+=("$topdir")
		projinherits+=("$projinherit")
	done <"$1"
}

# The RAM filesystem a case marked shm keeps its images on: a sparse image
# of more than 2^32 4 KiB blocks is more than 16 TiB, past the largest
# file ext4 (the usual /tmp) can hold; tmpfs holds it, and only what is
# written takes memory
KT_SHM=${ORLOV_SHM:-/dev/shm}

# kt_shm_room SIZE NEED_MIB: why the sparse images of a shm case cannot
# live in $KT_SHM (nothing, status 0, when they can): it must be a tmpfs
# (a disk filesystem there would be the same limit again) that takes a
# file of SIZE (mke2fs's size argument) and has NEED_MIB free
kt_shm_room() {
	local probe avail
	[ -d "$KT_SHM" ] && [ -w "$KT_SHM" ] ||
		{ echo "$KT_SHM missing or not writable"; return 1; }
	[ "$(stat -f -c %T "$KT_SHM")" = tmpfs ] ||
		{ echo "$KT_SHM is not a tmpfs"; return 1; }
	probe=$(mktemp "$KT_SHM/orlov-crosscheck-probe.XXXXXX") ||
		{ echo "cannot create a file in $KT_SHM"; return 1; }
	if ! truncate -s "$1" "$probe" 2>/dev/null; then
		rm -f "$probe"
		echo "$KT_SHM cannot hold a sparse file of $1"
		return 1
	fi
	rm -f "$probe"
	avail=$(df -Pm "$KT_SHM" | awk 'NR == 2 { print $4 }')
	[ "${avail:-0}" -ge "$2" ] ||
		{ echo "$KT_SHM has ${avail:-?} MiB free, the case needs $2"; return 1; }
}

# kt_group_state IMAGE: per group, the descriptor's lazy-init state and
# counts as debugfs's stats prints them: the flags (INODE_UNINIT and
# BLOCK_UNINIT; ITABLE_ZEROED, which the kernel's lazyinit thread sets in
# the background, is not among them, and the checksum, which covers it,
# is left out) and the free blocks, free inodes, directories and unused
# inodes line (without uninit_bg or metadata_csum debugfs has no unused
# count nor flags).  Not dumpe2fs: it lists every group's free ranges
# from the bitmaps, 15 s for 212,992 groups where this takes 1.4 s.
kt_group_state() {
	debugfs -R stats "$1" 2>/dev/null | awk '
	function flush() { if (g != "") print g " " f " " c; g = "" }
	/^ Group +[0-9]+:/ { flush(); g = $2; sub(/:$/, "", g); f = c = ""; next }
	g != "" && / free blocks, .* free inodes, / { c = $0; sub(/^ +/, "", c); next }
	g != "" && /^ +\[.*\]$/ {
		f = $0; sub(/^ +/, "", f)
		gsub(/(, )?Checksum 0x[0-9a-f]+/, "", f); sub(/^\[, /, "[", f)
		if (f == "[]") f = ""
	}
	END { flush() }'
}

# pre-existing content: N files (1..~120 KiB of non-zero data, so that
# debugfs writes no holes) in /pre/a, /pre/b, /pre/c, written with debugfs
# (libext2fs: first free inode from the parent's group on, blocks from the
# inode's group on, so with a small -N and enough data they spill into
# later groups), then every third one removed again (holes in the inode
# and block bitmaps).  DATADIR caches the data files.
kt_prefill_image() { # IMAGE N DATADIR
	local img=$1 n=$2 dd=$3 k sz cmds
	mkdir -p "$dd"
	cmds=$dd/cmds.$$
	{
		echo "mkdir /pre"
		for d in a b c; do echo "mkdir /pre/$d"; done
		for k in $(seq 1 "$n"); do
			sz=$(( (k * 7919 % 120 + 1) * 1024 - k % 3 * 100 ))
			[ -f "$dd/$sz" ] ||
				yes "prefill $sz" | head -c "$sz" >"$dd/$sz"
			echo "write $dd/$sz /pre/${kt_letters:$((k % 3)):1}/f$k"
		done
		for k in $(seq 3 3 "$n"); do echo "rm /pre/${kt_letters:$((k % 3)):1}/f$k"; done
	} >"$cmds"
	debugfs -w -f "$cmds" "$img" >/dev/null || return 1
	rm -f "$cmds"
	e2fsck -fn "$img" >/dev/null 2>&1 || { echo "prefilled image not clean"; return 1; }
}

# kt_base_image I IMAGE TARGET LOG DATADIR [SRC]: the starting image of
# case I (after kt_read_cases): pinned mke2fs (fixed UUID and hash seed),
# the prefill, then TARGET ("" or "/" for the root) made with debugfs
# mkdir; for a merge case, some of SRC's directories made there too
# (kt_merge_dirs)
kt_base_image() {
	local i=$1 base=$2 target=${3%/} log=$4 n=${names[$1]} d c comps
	local -a mo=() words
	local ext=hash_seed=$KT_UUID,root_owner=0:0 flags
	# a shm case's image is a symlink into $KT_SHM: mke2fs makes the
	# file there again
	if [ -L "$base" ]; then
		rm -f "$(readlink -- "$base")"
	else
		rm -f "$base"
	fi
	# mke2fs keeps only the last -E: the case's own go into the pinned one
	read -r -a words <<<"${margs[$i]}"
	for ((c = 0; c < ${#words[@]}; c++)); do
		if [ "${words[$c]}" = -E ]; then
			c=$((c + 1))
			ext=${words[$c]},$ext
		else
			mo+=("${words[$c]}")
		fi
	done
	mke2fs -F -q "${mo[@]}" -U "$KT_UUID" \
		-E "$ext" "$base" "${sizes[$i]}" \
		>"$log" 2>&1 || { cat "$log"; kt_die "$n: mke2fs failed"; }
	if [ "${prefills[$i]}" -gt 0 ]; then
		kt_prefill_image "$base" "${prefills[$i]}" "$5" >>"$log" 2>&1 ||
			kt_die "$n: prefill failed"
	fi
	if [ -n "$target" ]; then
		d=
		IFS=/ read -r -a comps <<<"${target#/}"
		for c in "${comps[@]}"; do
			d=$d/$c
			debugfs -w -R "mkdir $d" "$base" >>"$log" 2>&1 ||
				kt_die "$n: debugfs mkdir $d failed"
		done
		debugfs -R "stat $target" "$base" 2>/dev/null | grep -q 'Type: directory' ||
			kt_die "$n: $target not created"
	fi
	# topdir: EXT4_TOPDIR_FL (0x20000) on the target, added to its flags
	# (an ext4 directory has EXTENTS_FL too): ext4's find_group_orlov then
	# treats the directories made in it as top-level ones, each in the
	# flex group its name hashes to, over the whole image
	if [ "${topdirs[$i]}" = true ]; then
		flags=$(kt_inode_flags "$base" "${target:-/}")
		[ -n "$flags" ] || kt_die "$n: no flags of ${target:-/}"
		debugfs -w -R "set_inode_field ${target:-/} flags $(printf '0x%x' $((flags | 0x20000)))" \
			"$base" >>"$log" 2>&1
		flags=$(kt_inode_flags "$base" "${target:-/}")
		[ -n "$flags" ] && [ $((flags & 0x20000)) != 0 ] ||
			kt_die "$n: setting TOPDIR on ${target:-/} failed"
	fi
	# projinherit=ID: EXT4_PROJINHERIT_FL (0x20000000) on the target and
	# its project id ID: __ext4_new_inode gives every inode made below it
	# that id, and new directories the flag (the usage: e2fsck below)
	if [ -n "${projinherits[$i]}" ]; then
		flags=$(kt_inode_flags "$base" "${target:-/}")
		[ -n "$flags" ] || kt_die "$n: no flags of ${target:-/}"
		debugfs -w -R "set_inode_field ${target:-/} flags $(printf '0x%x' $((flags | 0x20000000)))" \
			"$base" >>"$log" 2>&1
		debugfs -w -R "set_inode_field ${target:-/} projid ${projinherits[$i]}" \
			"$base" >>"$log" 2>&1
		flags=$(kt_inode_flags "$base" "${target:-/}")
		[ -n "$flags" ] && [ $((flags & 0x20000000)) != 0 ] &&
			debugfs -R "stat ${target:-/}" "$base" 2>/dev/null |
			grep -q "Project: *${projinherits[$i]} " ||
			kt_die "$n: setting PROJINHERIT on ${target:-/} failed"
	fi
	if [ -n "${targetacls[$i]}" ]; then
		kt_target_acl "$base" "${target:-/}" "${targetacls[$i]}" "$log" ||
			kt_die "$n: setting the default ACL of ${target:-/} failed"
	fi
	if [[ " ${merges[$i]} " == *" --merge "* ]]; then
		[ -n "${6:-}" ] || kt_die "$n: a merge case needs SRC"
		kt_merge_dirs "$base" "$target" "$6" >>"$log" 2>&1 ||
			kt_die "$n: making the directories to merge into failed"
	fi
	# the quota feature: debugfs charged its directories to nobody; e2fsck
	# writes the usage into the quota files (the same bytes at every run)
	# so that the kernel, which trusts them, starts from a clean image
	if dumpe2fs -h "$base" 2>/dev/null | grep -q '^Filesystem features:.* quota'; then
		e2fsck -fy "$base" >>"$log" 2>&1
		e2fsck -fn "$base" >>"$log" 2>&1 ||
			kt_die "$n: the quota usage e2fsck wrote is not clean"
	fi
}

# kt_inode_flags IMAGE PATH: PATH's i_flags as debugfs prints them (0x...)
kt_inode_flags() {
	debugfs -R "stat $2" "$1" 2>/dev/null |
		sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p' | head -n 1
}

# For --merge: every other directory directly in SRC, and every third one
# below those, made in TARGET with debugfs before the run (libext2fs puts
# them in the first free inodes), so that the tool and the kernel both find
# them there: the tool merges into them, the replay's mkdir meets EEXIST
# and goes on, as cp -a does.
kt_merge_dirs() { # IMAGE TARGET SRC
	local img=$1 t=${2%/} src=$3 d e k=0 j cmds=$1.merge
	: >"$cmds"
	# names debugfs takes as one word (gentree also makes others)
	while IFS= read -r d; do
		k=$((k + 1))
		[ $((k % 2)) = 1 ] || continue
		echo "mkdir $t/$d" >>"$cmds"
		j=0
		while IFS= read -r e; do
			j=$((j + 1))
			[ $((j % 3)) = 1 ] && echo "mkdir $t/$d/$e" >>"$cmds"
		done < <(cd "$src/$d" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' |
			 grep -E '^[A-Za-z0-9._-]+$' | LC_ALL=C sort)
	done < <(cd "$src" && find . -mindepth 1 -maxdepth 1 -type d -printf '%f\n' |
		 grep -E '^[A-Za-z0-9._-]+$' | LC_ALL=C sort)
	[ -s "$cmds" ] || { echo "no directories to merge into"; return 1; }
	debugfs -w -f "$cmds" "$img" && rm -f "$cmds" &&
		e2fsck -fn "$img" >/dev/null 2>&1
}

# A default ACL on the target directory, written with debugfs (an attribute
# block, in ext2's disk form): base = u::rwx,g::r-x,o::r-x (new directories
# inherit exactly it, files get no access ACL), named = u::rwx,u:1000:rwx,
# g::r-x,m::rwx,o::r-x (every new inode gets an access ACL too).
kt_target_acl() { # IMAGE PATH base|named LOG
	local v='\002\000\000\000\001\000\007\000\377\377\377\377'
	[ "$3" = named ] && v=$v'\002\000\007\000\350\003\000\000'
	v=$v'\004\000\005\000\377\377\377\377'
	[ "$3" = named ] && v=$v'\020\000\007\000\377\377\377\377'
	v=$v'\040\000\005\000\377\377\377\377'
	printf "$v" >"$1.acl" &&
		debugfs -w -R "ea_set -f $1.acl $2 system.posix_acl_default" "$1" \
			>>"$4" 2>&1 &&
		debugfs -R "ea_list $2" "$1" 2>/dev/null |
			grep -q 'system.posix_acl_default'
	local rc=$?
	rm -f "$1.acl"
	return $rc
}
