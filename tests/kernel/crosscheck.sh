#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# crosscheck.sh - populate the same starting image once with orlov-populate
# (offline) and once with the real ext2 driver (QEMU guest, replaying the
# source tree's manifest with plain syscalls), then compare the layouts.
#
# Usage:
#   tests/kernel/crosscheck.sh [--cases FILE] [--only REGEX] [--keep DIR]
#       [--policy orlov|oldalloc] [--kernel stock|patched|debian] [--batch N]
#       [--target PATH] [--mount-opts OPTS] [--cpus N|up] [--trace]
#       [--heavy|--no-heavy] [--fstype ext2|ext4] [--driver ext2|ext4]
#       [--measure] [--ext4-trace] [--ext4-events LIST]
#       [--variant REGEX:SUFFIX:MOUNTOPTS:KERNEL[:TOOLOPTS[:ROT[:FSTYPE]]]]...
#       [--unpinned] [--arch amd64|arm64]
#
#   --cases   corpus file (default tests/kernel/cases.list; format there)
#   --only    run only the cases whose name matches this extended regex
#   --keep    keep all artefacts (images, trees, logs) in DIR (a case
#             marked shm in cases.list keeps its images in a directory on
#             /dev/shm, symlinked from DIR; without --keep it is removed
#             at exit, after a failure too)
#   --policy  allocator: passed to the tool as --policy and, for oldalloc,
#             to the guest's mount as -o oldalloc (default orlov)
#   --kernel  which kernel/build-kernel.sh build to boot (default stock;
#             ORLOV_KERNEL=bzImage overrides); debian: Debian 12's own
#             kernel and its ext4, jbd2 and virtio modules
#             (kernel/debian-kernel.sh; ext2 and ext3 through the ext4
#             driver), SMP only: --cpus N (default 2), no --trace
#   --source  6.1 (default) or 6.12: the kernel source the stock or patched
#             build is made from (kernel/build-kernel.sh --source), and the
#             tool's --kernel (attribute name hash, attribute blocks
#             without a reservation window on 6.12); with --kernel debian
#             the Debian package of that line (debian-kernel.sh --line)
#   --batch   cases (disks) per QEMU boot (default 20)
#   --target  directory the tree goes into (default /t/u, made with debugfs
#             mkdir; the stock kernel spreads top-level directories at
#             random, so exactness is only checked below the top level)
#   --mount-opts  extra guest mount options, comma separated (e.g. the
#             patched kernel's topdir_hash together with --target /)
#   --cpus    up (default): the uniprocessor kernel build, one QEMU CPU;
#             N: the SMP build (kernel/build-kernel.sh --smp) on qemu -smp N,
#             the replayer pinned to the last CPU, the tool run with
#             --cpus N (percpu counters that lag by up to a batch)
#   --trace   also capture the guest's ext2 allocation trace (tracefs
#             events/ext2, patched kernel only) and the tool's --trace for
#             every case; both normalised (trace-normalize) must be equal
#             line for line (the first differences are shown)
#   --heavy / --no-heavy  run / leave out the cases tagged `heavy` in the
#             corpus (default: run them only in the plain stock check:
#             --policy orlov, --kernel stock, --target /t/u, no --mount-opts,
#             --cpus up)
#   --fstype  the guest's mount -t (default ext2; under --kernel debian both
#             are the ext4 driver).  A case marked ext4 in cases.list (its
#             image has the ext4 driver's ro_compat features, which -t ext2
#             refuses read-write) is mounted -t ext4, with -o nodelalloc
#             under --fstype ext2, and runs only with --driver ext4
#   --driver  the tool's --driver (default ext2; ext4: the ext4 driver's
#             model, for --kernel debian; with --fstype ext4 also the
#             tool's --delalloc)
#   A case with measured=WHY in cases.list is measured too, WHY said,
#   and so is a case where the tool warns that something is not modelled
#   (--delalloc on dioread_nolock: a file written back while being
#   written).
#   --ext4-events LIST  (--kernel debian) the kernel's own ext4 tracepoints
#             (comma-separated names under events/ext4, e.g.
#             ext4_allocate_inode,ext4_mballoc_alloc,ext4_free_blocks; another
#             subsystem's as SUBSYS/NAME, e.g. jbd2/jbd2_start_commit)
#             recorded from the mount to the unmount, writeback included,
#             into the results directory as CASE.events (with --keep):
#             for finding where a measured case departs; not compared
#   --ext4-trace  (--kernel debian --driver ext4) also record ext4's own
#             tracepoints in the guest (ext4_allocate_inode,
#             ext4_allocate_blocks, ext4_mballoc_alloc, ext4_mballoc_prealloc,
#             ext4_free_blocks; from the mount to the unmount, writeback
#             included) and run the tool with --trace; both normalised
#             (trace-normalize --ext4) must be equal line for line where the
#             layouts are (the first differences are shown); a trace
#             buffer overrun on any CPU fails the case
#   --variant REGEX:SUFFIX:MOUNTOPTS:KERNEL[:TOOLOPTS[:ROT[:FSTYPE]]]  the
#             selected cases matching REGEX once more, as CASE-SUFFIX, in
#             the same boots: the guest's mount with MOUNTOPTS (comma
#             separated) added, the tool with --kernel KERNEL (empty: as
#             --source) and TOOLOPTS (space separated), and with ROT (yes
#             or no) the disk's queue/rotational and the tool's
#             --rotational instead of the case's, and with FSTYPE (ext2
#             or ext4) that mount -t instead of --fstype's (the tool's
#             delayed allocation as that mount has it): both mounts in
#             one boot.  E.g. mb_optimize_scan=0
#             and 6.1.164: Debian's 6.1.192 scanning groups in turn, as
#             6.1 before 6.1.165 did for indirect-mapped files;
#             mb_optimize_scan=0 and "--mb-optimize-scan no"; or ::: :no,
#             a non-rotational disk.  Repeatable.
#   --arch    the guest's architecture (run-guest.sh -A): amd64 (default)
#             or arm64, Debian's arm64 package of the line on
#             qemu-system-aarch64 -M virt (--kernel debian only), the
#             tool's --kernel LINE-arm64 (ORLOV_TOOL_KERNEL or a
#             variant's KERNEL, when given, as they are)
#   --unpinned  (--cpus N) the replayer and the writeback flusher not
#             pinned to a CPU: the scheduler moves them, as it moves a
#             plain `cp -a` on an SMP machine (the dirty-writeback sysctls
#             and the buddy loading stay); for measuring what a user gets,
#             with --measure
#   --measure a layout difference is not a failure: reported as
#             `ok N - CASE paths/same_inode/same_blocks # measured` (the
#             kernel side, the tool's exit status and e2fsck of both images
#             must still pass); for kernels the tool does not model yet
#
# Environment: ORLOV_POPULATE (default $top_builddir/src/orlov-populate),
# ORLOV_LAYOUT (default $top_builddir/src/orlov-layout), ORLOV_CACHE.
#
# Per case the kernel side is always checked (guest replay succeeded, the
# tree read back in the guest equals the manifest, e2fsck -fn clean).  If
# both tool binaries exist the tool side is run and `orlov-layout diff`
# must report identical layouts.  Output is TAP; exit 0 if every case
# passed, 1 on any failure, 77 if QEMU is missing or the tool binaries are
# not built (after the kernel side passed).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

cases=$kt_here/cases.list
only=
keep=
policy=orlov
kmode=${ORLOV_KERNEL_MODE:-stock}
batch=20
target=/t/u
mextra=
trace=false
events=
ext4trace=false
heavy=
cpus=
fstype=ext2
measure=false
ksource=6.1
driver=ext2
variants=()
unpinned=false
arch=${ORLOV_ARCH:-amd64}
while [ $# -gt 0 ]; do
	case $1 in
	--cases) cases=$2; shift ;;
	--only) only=$2; shift ;;
	--keep) keep=$2; shift ;;
	--policy) policy=$2; shift ;;
	--kernel) kmode=$2; shift ;;
	--batch) batch=$2; shift ;;
	--target) target=$2; shift ;;
	--mount-opts) mextra=$2; shift ;;
	--cpus) cpus=$2; shift ;;
	--trace) trace=true ;;
	--ext4-events) events=$2; shift ;;
	--ext4-trace) ext4trace=true ;;
	--heavy) heavy=yes ;;
	--no-heavy) heavy=no ;;
	--fstype) fstype=$2; shift ;;
	--measure) measure=true ;;
	--driver) driver=$2; shift ;;
	--source) ksource=$2; shift ;;
	--variant) variants+=("$2"); shift ;;
	--unpinned) unpinned=true ;;
	--arch) arch=$2; shift ;;
	-h|--help) awk 'NR >= 3 && /^set /{ exit } NR >= 3' "$0"; exit 0 ;;
	*) echo "crosscheck.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
case $policy in orlov|oldalloc) ;; *) kt_die "bad --policy $policy" ;; esac
case $target in /*) ;; *) target=/$target ;; esac
target=${target%/}
[[ $target =~ ^[A-Za-z0-9_./-]*$ ]] || kt_die "--target: plain names only"
case $kmode in stock|patched|debian) ;; *) kt_die "bad --kernel $kmode" ;; esac
case $fstype in ext2|ext4) ;; *) kt_die "bad --fstype $fstype (ext2 or ext4)" ;; esac
case $ksource in 6.1|6.12) ;; *) kt_die "bad --source $ksource (6.1 or 6.12)" ;; esac
case $driver in ext2|ext4) ;; *) kt_die "bad --driver $driver (ext2 or ext4)" ;; esac
case $arch in amd64|arm64) ;; *) kt_die "bad --arch $arch (amd64 or arm64)" ;; esac
[ "$arch" = amd64 ] || [ "$kmode" = debian ] ||
	kt_die "--arch $arch boots Debian's kernel only: give --kernel debian"
kt_set_arch "$arch"
# the tool's --kernel: the line, on arm64 its -arm64 model
tkdefault=${ORLOV_TOOL_KERNEL:-$ksource}
[ "$arch" = amd64 ] || [ -n "${ORLOV_TOOL_KERNEL:-}" ] || tkdefault=$ksource-$arch
# --kernel debian --source 6.12: Debian 12's 6.12 package (the kernel of
# Debian 13), the tool run with --kernel 6.12
[ "$kmode" != debian ] || export ORLOV_DEBIAN_LINE=$ksource
export ORLOV_KERNEL_SOURCE=$ksource
if $ext4trace; then
	[ "$kmode" = debian ] && [ "$driver" = ext4 ] ||
		kt_die "--ext4-trace compares Debian's kernel's ext4 tracepoints: give --kernel debian --driver ext4"
	events=${events:+$events,}ext4_allocate_inode,ext4_allocate_blocks,ext4_mballoc_alloc,ext4_mballoc_prealloc,ext4_free_blocks
fi
if [ "$kmode" = debian ]; then
	# Debian's kernel is SMP: its percpu counters batch, model that
	[ "$cpus" != up ] ||
		kt_die "--kernel debian is an SMP kernel: give --cpus N (default 2), not up"
	cpus=${cpus:-2}
	$trace && kt_die "--trace needs the patched kernel's tracepoints; Debian's kernel has none (drop --trace or use --kernel patched)"
fi
cpus=${cpus:-up}
export ORLOV_KERNEL_MODE=$kmode
# the replayer's CPU: the last one, so that it is not the one the boot and
# the guest's shell ran on
qcpus=1 pin=0 rpin=
if [ "$cpus" != up ]; then
	[[ $cpus =~ ^[1-8]$ ]] || kt_die "--cpus takes up or 1 to 8"
	[ "$kmode" = debian ] || export ORLOV_KERNEL_SMP=1
	qcpus=$cpus pin=$((cpus - 1)) rpin="--cpu $((cpus - 1))"
fi
# --unpinned: where the scheduler puts the writer and the flusher
if $unpinned; then
	[ "$cpus" != up ] || kt_die "--unpinned needs an SMP guest: give --cpus N"
	rpin=
fi

kt_require_qemu
kt_need mke2fs e2fsprogs debugfs e2fsprogs || true
for c in mke2fs debugfs e2fsck; do
	command -v $c >/dev/null || kt_die "$c missing (e2fsprogs)"
done

tool=${ORLOV_POPULATE:-$top_builddir/src/orlov-populate}
layout=${ORLOV_LAYOUT:-$top_builddir/src/orlov-layout}
have_tool=true
if [ ! -x "$tool" ] || [ ! -x "$layout" ]; then
	have_tool=false
	kt_log "tool binaries not found ($tool, $layout): kernel side only"
fi

kernel=$(kt_kernel) || exit 1
moddir=$(kt_kernel_moddir "$kernel") || exit 1
kmargs=()
[ -z "$moddir" ] || kmargs=(-M "$moddir")
replay=$(kt_replay) || exit 1
gentree=$(kt_gentree) || exit 1

kt_workdir "$keep" payload img log res

# ---- cases --------------------------------------------------------------------
if [ -z "$heavy" ]; then
	heavy=no
	[ "$policy" = orlov ] && [ "$kmode" = stock ] && [ "$target" = /t/u ] &&
		[ -z "$mextra" ] && [ "$cpus" = up ] && heavy=yes
fi
kt_driver=$driver
kt_read_cases "$cases" "$only" "$heavy"
[ $nheavy = 0 ] || kt_log "left out $nheavy heavy case(s) (--heavy runs them)"
[ $next4 = 0 ] || kt_log "left out $next4 ext4-driver case(s) (--driver ext4 runs them)"
# --variant: its cases' extra mount options, tool --kernel and options,
# by index
kopts=() tkernels=() topts=() cfs=()
n0=${#names[@]}
for i in $(seq 0 $((n0 - 1))); do cfs[i]=$fstype; done
for variant in "${variants[@]}"; do
	IFS=: read -r vre vsuf vmo vkern vtopts vrot vfs <<<"$variant"
	[ -n "$vre" ] && [[ $vsuf =~ ^[a-z0-9]+$ ]] &&
		[[ $vrot =~ ^(yes|no|)$ ]] && [[ $vfs =~ ^(ext2|ext4|)$ ]] ||
		kt_die "--variant takes REGEX:SUFFIX:MOUNTOPTS:KERNEL[:TOOLOPTS[:yes|no[:ext2|ext4]]]"
	for i in $(seq 0 $((n0 - 1))); do
		[[ ${names[$i]} =~ $vre ]] || continue
		names+=("${names[$i]}-$vsuf"); sizes+=("${sizes[$i]}")
		gargs+=("${gargs[$i]}"); margs+=("${margs[$i]}")
		colours+=("${colours[$i]}"); prefills+=("${prefills[$i]}")
		targetacls+=("${targetacls[$i]}"); merges+=("${merges[$i]}")
		ext4s+=("${ext4s[$i]}"); measureds+=("${measureds[$i]}")
		rotationals+=("${vrot:-${rotationals[$i]}}")
		shms+=("${shms[$i]}"); topdirs+=("${topdirs[$i]}")
		projinherits+=("${projinherits[$i]}")
		kopts[${#names[@]} - 1]=$vmo tkernels[${#names[@]} - 1]=$vkern
		topts[${#names[@]} - 1]=$vtopts cfs[${#names[@]} - 1]=${vfs:-$fstype}
	done
done
ncases=${#names[@]}
[ "$ncases" -gt 0 ] || kt_die "no cases selected"

letters=abcdefghijklmnopqrstuvwxyz

# A case marked shm keeps its images in RAM ($KT_SHM, lib.sh), in a
# directory of its own; $work/img has symlinks to them.  Removed on exit
# (failed runs too: they are RAM) unless --keep.
shmdir=
shm_dir() {
	[ -z "$shmdir" ] || return 0
	shmdir=$(mktemp -d "$KT_SHM/orlov-crosscheck.XXXXXX") || return 1
	if [ -z "$keep" ]; then
		trap 'rm -rf "$work" "$shmdir"' EXIT
	else
		kt_log "shm cases' images: $shmdir (--keep: not removed)"
	fi
}
# why a shm case was left out (nothing for the others), by index
shmskip=()
# MiB of guest memory for the case's groups, by index: once every
# group's buddy is loaded (mb_groups, below) each group holds the page of
# its block bitmap and the page of its buddy in the buddy cache and its
# bitmap's buffer in the disk's page cache, 12 KiB with 4 KiB blocks (the
# pages are reclaimable, but a buddy dropped is loaded again, slowly)
gmem=()

t_prep=$(date +%s)
for i in $(seq 0 $((ncases - 1))); do
	n=${names[$i]}
	src=$work/payload/$n
	base=$work/img/$n.base.img
	if [ "${shms[$i]}" = true ]; then
		if ! why=$(kt_shm_room "${sizes[$i]}" 64) || ! shm_dir; then
			shmskip[$i]=${why:-cannot make a directory in $KT_SHM}
			kt_log "$n: left out: ${shmskip[$i]}"
			continue
		fi
		for k in base K T; do
			ln -sfn "$shmdir/$n.$k.img" "$work/img/$n.$k.img"
		done
	fi
	# shellcheck disable=SC2086
	"$gentree" ${gargs[$i]} "$src" || kt_die "$n: gentree failed"
	"$replay" manifest "$src" >"$work/payload/$n.manifest" ||
		kt_die "$n: manifest failed"
	kt_base_image "$i" "$base" "$target" "$work/log/$n.mke2fs" "$work/prefill" "$src"
	gmem[$i]=$(dumpe2fs -h "$base" 2>/dev/null | awk -F: '
		/^Block count/ { b = $2 } /^Blocks per group/ { g = $2 }
		/^Block size/ { s = $2 }
		END { if (g) printf "%d", (b + g - 1) / g * 3 * s / 1048576 + 0.5 }')
	if [ "${shms[$i]}" = true ]; then
		# three copies as sparse as the base at a time (base, K, T;
		# then K, T and run-guest.sh's copy of K for a retry), what
		# the tool reserves in T before its commit (fallocate: on a
		# tmpfs, memory) for the two bitmaps of every group, written
		# or not (3 pages a group, as gmem counts), and a margin of
		# 512 MiB
		need=$(( $(du -m "$(readlink -- "$base")" | cut -f1) * 3 + gmem[i] * 2 / 3 + 512 ))
		if ! why=$(kt_shm_room "${sizes[$i]}" "$need"); then
			shmskip[$i]=$why
			kt_log "$n: left out: $why"
			rm -f "$shmdir/$n".*.img "$work/img/$n".*.img
			continue
		fi
	fi
	journals[$i]=false
	dumpe2fs -h "$base" 2>/dev/null |
		grep -q '^Filesystem features:.*has_journal' && journals[$i]=true
	# (cp writes through no dangling symlink: a shm case's to its file)
	for k in K T; do
		dst=$work/img/$n.$k.img
		[ ! -L "$dst" ] || dst=$(readlink -- "$dst")
		cp --sparse=always "$base" "$dst" || kt_die "$n: cannot copy the image"
	done
	# a shm case's base is RAM that nothing reads again (unless --keep)
	[ "${shms[$i]}" != true ] || [ -n "$keep" ] || rm -f "$(readlink -- "$base")"
	if $have_tool; then
		targs=() dargs=()
		{ $trace || $ext4trace; } && targs=(--trace "$work/log/$n.ttrace")
		# ext4 mounted -t ext4 delays allocation; the --fstype ext2
		# run mounts ext4 images -o nodelalloc (the tool's default for
		# them is the delayed one)
		[ "$driver/${cfs[$i]}" = ext4/ext4 ] && dargs=(--delalloc)
		[ "$driver/${cfs[$i]}" = ext4/ext2 ] && dargs=(--no-delalloc)
		"$tool" --policy "$policy" --block-colour "${colours[$i]}" --cpus "$cpus" \
			--kernel "${tkernels[$i]:-$tkdefault}" --driver "$driver" "${dargs[@]}" \
			--target "${target:-/}" "${targs[@]}" ${merges[$i]} \
			${rotationals[$i]:+--rotational "${rotationals[$i]}"} ${topts[$i]:-} \
			"$work/img/$n.T.img" "$src" >"$work/log/$n.tool" 2>&1
		echo $? >"$work/log/$n.tool.rc"
	fi
done
kt_log "prepared $ncases cases in $(( $(date +%s) - t_prep ))s"

# ---- kernel side: one boot per batch ----------------------------------------------
mo=$mextra
[ "$policy" = oldalloc ] && mo=${mo:+$mo,}oldalloc
# ext4's lazyinit thread would load buddies in the background, racing the
# reading of mb_groups below
[ "$kmode" = debian ] && mo=${mo:+$mo,}no_prefetch_block_bitmaps
# Case I's mount as TYPE:OPTIONS.  An image with the ext4 driver's
# ro_compat features (uninit_bg, dir_nlink, ...) is refused read-write -t
# ext2: -t ext4, and in the --fstype ext2 run with nodelalloc, which is
# what -t ext2 gives the others.
# Under Debian's kernel a journalled image also gets commit=600: a block
# freed in a transaction is back to the allocator only once the
# transaction commits (ext4_mb_free_metadata): no commit by the 5-second
# timer while the tree is written, only the sync's at the end.  Not
# without a journal, where ext4 refuses the option.
mount_of() {
	local c= x=${kopts[$1]:-} fstype=${cfs[$1]}
	# (an image mounted -t ext2 runs without its journal, and ext4
	# refuses commit= then)
	[ "$kmode" = debian ] && [ "${journals[$1]}" = true ] &&
		{ [ "${ext4s[$1]}" = true ] || [ "$fstype" != ext2 ]; } &&
		c=commit=600
	[ -z "$x" ] || c=${c:+$c,}$x
	if [ "${ext4s[$1]}" != true ]; then
		echo "$fstype:$c"
	elif [ "$fstype" = ext2 ]; then
		echo "ext4:nodelalloc${c:+,$c}"
	else
		echo "ext4:$c"
	fi
}
boot_fail=false
t_boot=$(date +%s)
# seconds to reach the guest script (run-guest.sh adds to it for a big
# initramfs) and for the whole boot: an arm64 guest has no firmware (QEMU
# loads the Image itself) and was up in 3 to 20 s, done in at most 120
# s, with every case of the corpus: a stalled boot is retried sooner
btime=180 ttime=1500
[ "$arch" = amd64 ] || btime=60 ttime=900
for start in $(seq 0 "$batch" $((ncases - 1))); do
	gs=$work/guest-$start.sh
	disks=() picks=() xmem=0
	{
		echo 'T=/sys/kernel/tracing'
		if [ "$cpus" != up ]; then
			# the counters' batch comes from the CPUs online
			want=0
			[ "$pin" = 0 ] || want=0-$pin
			echo "online=\$(cat /sys/devices/system/cpu/online)"
			echo "[ \"\$online\" = $want ] || { echo \"CPUs online: \$online, want $want\"; exit 5; }"
		fi
		if [ "$kmode" = debian ] && [ "$cpus" != up ]; then
			# ext4 takes a small file's blocks from the per-CPU
			# locality group of the CPU allocating them, at
			# writeback (-t ext4) the flusher's: keep the flusher
			# on the writer's CPU too
			$unpinned ||
			printf 'echo %x >/sys/devices/virtual/workqueue/writeback/cpumask || exit 6\n' \
				$((1 << pin))
			# -t ext4 allocates at writeback: none before the
			# final sync (no periodic flush within the hour, no
			# background flush below 90 % dirty memory; not 0,
			# which makes the first dirty inode wake the flusher
			# at once)
			echo 'echo 360000 >/proc/sys/vm/dirty_writeback_centisecs || exit 6'
			echo 'echo 360000 >/proc/sys/vm/dirty_expire_centisecs || exit 6'
			echo 'echo 90 >/proc/sys/vm/dirty_background_ratio || exit 6'
			echo 'echo 95 >/proc/sys/vm/dirty_ratio || exit 6'
		fi
		if $trace; then
			echo '[ -d $T/events/ext2 ] || { echo "no tracefs events/ext2"; exit 3; }'
			echo 'echo 65536 > $T/buffer_size_kb || exit 4'
		fi
		echo 'run_case() {'
		echo '	tc=$(date +%s)'
		# MOUNT: TYPE:OPTIONS, the case's own mount (see mount_of)
		echo "	name=\$1 dev=\$2 colour=\$3 mt=\${4%%:*} mx=\${4#*:} o='$mo'"
		# the rest: the replay's --merge, --casefold=PATH
		echo '	shift 4; merge=$*'
		echo '	[ -z "$mx" ] || o=${o:+$o,}$mx'
		echo '	if ! mount -t $mt ${o:+-o $o} "$dev" /mnt; then'
		echo '		echo "case $name: mount failed"; echo 90 >/results/$name.rc; return'
		echo '	fi'
		if [ "$kmode" = debian ]; then
			# ext4 skips groups whose buddy is not loaded yet at
			# criteria 0 and 1, and would load them in the
			# background from a random 0-5 s after mount: load
			# every group now, in group order
			echo '	t0=$(date +%s)'
			echo '	cat /proc/fs/ext4/${dev##*/}/mb_groups >/dev/null || { echo "case $name: no mb_groups"; echo 95 >/results/$name.rc; umount /mnt; return; }'
			# what loading them costs (the guest's log): a case of
			# many groups pays it in time and memory
			echo '	echo "case $name: buddies loaded in $(( $(date +%s) - t0 ))s; $(grep -E "^(MemFree|Cached):" /proc/meminfo | tr -s " " | tr "\\n" " ")"'
		fi
		if $trace; then
			echo '	echo > $T/trace; echo 1 > $T/events/ext2/enable'
		fi
		if [ -n "$events" ]; then
			echo '	echo 65536 > $T/buffer_size_kb; echo > $T/trace'
			for e in ${events//,/ }; do
				case $e in */*) ;; *) e=ext4/$e ;; esac
				echo "	echo 1 > \$T/events/$e/enable || exit 3"
			done
		fi
		echo "	replay run --colour \$colour \$merge $rpin /payload/\$name.manifest /payload/\$name /mnt$target"
		echo '	rc=$?'
		if $trace; then
			echo '	echo 0 > $T/events/ext2/enable'
			echo '	cat $T/trace > /results/$name.trace || rc=94'
			echo "	cat \$T/per_cpu/cpu$pin/stats > /results/\$name.tstats"
		fi
		echo '	mount -o remount,ro /mnt || rc=92'
		if [ -n "$events" ]; then
			echo '	echo 0 > $T/events/enable; cat $T/trace > /results/$name.events'
			# every CPU's: the writeback may run off the writer's
			echo '	cat $T/per_cpu/cpu*/stats > /results/$name.estats'
		fi
		echo "	[ \$rc != 0 ] || replay manifest /mnt$target >/results/\$name.manifest || rc=93"
		echo '	umount /mnt || rc=91'
		echo '	echo $rc >/results/$name.rc'
		# (the seconds: what a case costs in the guest)
		echo '	echo "case $name rc=$rc in $(( $(date +%s) - tc ))s"'
		echo '}'
		j=0
		for i in $(seq "$start" $((start + batch - 1))); do
			[ "$i" -lt "$ncases" ] || break
			[ -z "${shmskip[$i]:-}" ] || continue
			xmem=$((xmem + ${gmem[$i]:-0}))
			# a non-rotational disk (mballoc's s_mb_max_linear_groups
			# is read at mount)
			[ "${rotationals[$i]}" = no ] &&
				echo "echo 0 >/sys/block/vd${letters:$j:1}/queue/rotational || exit 7"
			echo "run_case ${names[$i]} /dev/vd${letters:$j:1} ${colours[$i]} $(mount_of "$i") ${merges[$i]}"
			disks+=(-d "$work/img/${names[$i]}.K.img")
			# only this batch's trees in its initramfs
			picks+=(-P "${names[$i]}" -P "${names[$i]}.manifest")
			j=$((j + 1))
		done
		echo 'exit 0'
	} >"$gs"
	[ ${#disks[@]} -gt 0 ] || continue
	"$kt_here/run-guest.sh" -k "$kernel" -p "$work/payload" "${picks[@]}" -s "$gs" \
		"${disks[@]}" "${kmargs[@]}" -A "$arch" -c "$qcpus" -r "$work/res" -o "$work/log/guest-$start.out" \
		-x "$xmem" \
		-l "$work/log/console-$start.log" -t "$ttime" -b "$btime"
	grc=$?
	[ $grc = 77 ] && exit 77
	if [ $grc != 0 ]; then
		boot_fail=true
		kt_log "guest run failed (rc=$grc), see $work/log/console-$start.log"
	fi
done
kt_log "kernel side: $(( $(date +%s) - t_boot ))s in QEMU"

# ---- compare ---------------------------------------------------------------------
# traces_equal WHAT EVENTS WHICH KERNEL TOOL OVERRUN DIFF: the normalised
# traces of case $n ($num) equal, the kernel's not empty nor overrun;
# else the TAP failure line (and the first differences), status 1.
traces_equal() {
	local kn
	kn=$(grep -c . "$4")
	if [ "$kn" = 0 ]; then
		echo "not ok $num - $n: empty $1 (events/$2 not recording?)"
	elif [ "${6:-x}" != 0 ]; then
		echo "not ok $num - $n: $1 buffer overrun (${6:-no stats})"
	elif ! diff "$4" "$5" >"$7"; then
		echo "not ok $num - $n: $3 differ (kernel $kn records, tool $(grep -c . "$5")); first differences (< kernel, > tool):"
		head -n 12 "$7" | sed 's/^/# /'
	else
		return 0
	fi
	return 1
}

strip_extents() { # MANIFEST PREFILLED
	if [ -z "$target" ]; then
		# mke2fs's lost+found and the prefill's /pre are not from SRC
		awk -v pre="$2" '{
			p = $5
			if ($1 == "f") p = $6
			else if ($1 == "l") p = $4
			else if ($1 == "h") p = $2
			else if ($1 == "c" || $1 == "b") p = $8
			if ($1 == "d" && p == "lost+found") next
			if (pre > 0 && (p == "pre" || substr(p, 1, 4) == "pre/")) next
			print }' "$1"
	else
		cat "$1"
	fi | awk '$1 == "f" { $7 = "" } { print }'
	[ "${PIPESTATUS[0]}" = 0 ] || echo "strip_extents: awk failed"
}

# The kernel's ext2_inode_alloc prints name=%s raw; orlov-populate --trace
# escapes the name like every path it prints (bytes < 0x21, '%', > 0x7e as
# %XX).  Only for that field, bring the kernel's record to the tool's form
# before comparing (a raw name with a space would otherwise split fields).
escape_kernel_names() {
	perl -pe 's/^(ext2_inode_alloc: dir=\d+ name=)(.*?)( mode=(?:dir|other) branch=\S+ pgroup=-?\d+ avefreei=)/$1 . join("", map { my $o = ord; ($o < 0x21 || $o > 0x7e || $_ eq "%") ? sprintf("%%%02X", $o) : $_ } split(\/\/, $2)) . $3/e'
}

echo "1..$ncases"
failed=0
skipped=0
for i in $(seq 0 $((ncases - 1))); do
	n=${names[$i]}
	num=$((i + 1))
	why=
	if [ -n "${shmskip[$i]:-}" ]; then
		echo "ok $num - $n # SKIP ${shmskip[$i]}"
		continue
	fi
	krc=$(cat "$work/res/$n.rc" 2>/dev/null || echo missing)
	if [ "$krc" != 0 ]; then
		why="guest replay rc=$krc"
	elif ! diff <(strip_extents "$work/payload/$n.manifest" 0) \
		<(strip_extents "$work/res/$n.manifest" "${prefills[$i]}") >"$work/log/$n.kdiff"; then
		why="tree read back in guest differs from manifest ($work/log/$n.kdiff)"
		head -n 5 "$work/log/$n.kdiff" | sed 's/^/# /'
	elif ! e2fsck -fn "$work/img/$n.K.img" >"$work/log/$n.K.fsck" 2>&1; then
		why="e2fsck of kernel image failed"
		tail -n 5 "$work/log/$n.K.fsck" | sed 's/^/# /'
	fi
	if [ -n "$why" ]; then
		echo "not ok $num - $n: kernel side: $why"
		failed=$((failed + 1))
		continue
	fi
	if ! $have_tool; then
		kpaths=$(grep -c . "$work/payload/$n.manifest")
		echo "ok $num - $n # SKIP tool not built (kernel side ok, $kpaths entries)"
		skipped=$((skipped + 1))
		continue
	fi
	trc=$(cat "$work/log/$n.tool.rc")
	if [ "$trc" != 0 ]; then
		echo "not ok $num - $n: orlov-populate rc=$trc"
		tail -n 5 "$work/log/$n.tool" | sed 's/^/# /'
		failed=$((failed + 1))
		continue
	fi
	if ! e2fsck -fn "$work/img/$n.T.img" >"$work/log/$n.T.fsck" 2>&1; then
		echo "not ok $num - $n: e2fsck of tool image failed"
		tail -n 5 "$work/log/$n.T.fsck" | sed 's/^/# /'
		failed=$((failed + 1))
		continue
	fi
	"$layout" diff "$work/img/$n.K.img" "$work/img/$n.T.img" \
		>"$work/log/$n.layout" 2>&1
	lrc=$?
	kt_layout_figures "$work/log/$n.layout"
	echo "# $n ${p:-?}/${si:-?}/${sb:-?}"
	if $trace && [ $lrc = 0 ]; then
		tdiff=$work/log/$n.tdiff
		"$kt_here/trace-normalize" "$work/res/$n.trace" | escape_kernel_names \
			>"$work/log/$n.ktrace.norm"
		"$kt_here/trace-normalize" "$work/log/$n.ttrace" >"$work/log/$n.ttrace.norm"
		ovr=$(sed -n 's/^overrun: *//p' "$work/res/$n.tstats" 2>/dev/null)
		if ! traces_equal "kernel trace" ext2 "traces" \
			"$work/log/$n.ktrace.norm" "$work/log/$n.ttrace.norm" "$ovr" "$tdiff"; then
			failed=$((failed + 1))
			continue
		fi
		kn=$(grep -c . "$work/log/$n.ktrace.norm")
		echo "# $n: trace equal, $kn records ($(grep -c '^ext2_inode_alloc' "$work/log/$n.ktrace.norm") inode, $(grep -c '^ext2_block_alloc' "$work/log/$n.ktrace.norm") block)"
	fi
	if $ext4trace; then
		ek=$work/log/$n.ektrace.norm et=$work/log/$n.ettrace.norm
		"$kt_here/trace-normalize" --ext4 "$work/res/$n.events" >"$ek"
		"$kt_here/trace-normalize" --ext4 "$work/log/$n.ttrace" >"$et"
	fi
	if $ext4trace && [ $lrc = 0 ]; then
		ovr=$(awk '/^overrun:/ { n++; s += $2 } END { print n ? s : "" }' \
			"$work/res/$n.estats" 2>/dev/null)
		if ! traces_equal "ext4 trace" ext4 "ext4 traces" \
			"$ek" "$et" "$ovr" "$work/log/$n.etdiff"; then
			failed=$((failed + 1))
			continue
		fi
		kn=$(grep -c . "$ek")
		echo "# $n: ext4 trace equal, $kn records ($(grep -c '^ext4_allocate_inode' "$ek") inode, $(grep -c '^ext4_allocate_blocks' "$ek") block, $(grep -c '^ext4_mballoc_alloc' "$ek") mballoc_alloc, $(grep -c '^ext4_mballoc_prealloc' "$ek") prealloc, $(grep -c '^ext4_free_blocks' "$ek") free)"
	elif $ext4trace; then
		# a measured layout: where the allocations part, for the record
		at=$(cmp "$ek" "$et" 2>&1 | sed -n 's/.* line \([0-9]*\).*/\1/p')
		echo "# $n: ext4 traces not compared (layouts differ): kernel $(grep -c . "$ek") records, tool $(grep -c . "$et"), first difference at record ${at:-?}"
	fi
	# the ext4 driver's lazy init: the same flags and itable_unused
	if [ $lrc = 0 ] && [ "${ext4s[$i]}" = true ] &&
		! diff <(kt_group_state "$work/img/$n.K.img") \
			<(kt_group_state "$work/img/$n.T.img") >"$work/log/$n.gdiff"; then
		echo "not ok $num - $n: group descriptors differ (< kernel, > tool):"
		head -n 8 "$work/log/$n.gdiff" | sed 's/^/# /'
		failed=$((failed + 1))
		continue
	fi
	why=${measureds[$i]}
	case $why in
	"@$ksource/${cfs[$i]} "*) why=${why#* } ;;
	@*) why= ;;
	esac
	if [ $lrc = 0 ]; then
		echo "ok $num - $n ${p:-?}/${si:-?}/${sb:-?}"
	elif $measure && [ -n "$p" ] && [ -n "$si" ] && [ -n "$sb" ]; then
		echo "ok $num - $n $p/$si/$sb # measured"
	elif [ -n "$why" ] && [ -n "$p" ] && [ -n "$si" ] && [ -n "$sb" ]; then
		# cases.list says what the model does not do yet here
		echo "ok $num - $n $p/$si/$sb # measured: $why"
	elif grep -q 'which orlov-populate does not model' "$work/log/$n.tool" &&
		[ -n "$p" ] && [ -n "$si" ] && [ -n "$sb" ]; then
		# the tool warns that what follows is not modelled
		echo "ok $num - $n $p/$si/$sb # measured: $(sed -n 's/.*warning: \(.*\): ext4 .*/\1/p' "$work/log/$n.tool" | head -n 1)"
	else
		echo "not ok $num - $n ${p:-?}/${si:-?}/${sb:-?}"
		grep -v 'paths=' "$work/log/$n.layout" | head -n 5 | sed 's/^/# /'
		failed=$((failed + 1))
	fi
done

if [ $failed -gt 0 ] || $boot_fail; then
	if [ -z "$keep" ]; then
		keepdir=${TMPDIR:-/tmp}/orlov-crosscheck-failed.$$
		mv "$work" "$keepdir" && trap - EXIT &&
			echo "# artefacts kept in $keepdir"
		# shm cases' images are RAM: not kept (--keep keeps them)
		if [ -n "$shmdir" ]; then
			rm -rf "$shmdir"
			echo "# (images of shm cases removed from $KT_SHM: rerun with --keep DIR to keep them)"
		fi
	fi
	exit 1
fi
if [ $skipped -gt 0 ]; then
	echo "# tool side skipped for $skipped cases (orlov-populate/orlov-layout not built)"
	exit 77
fi
exit 0
