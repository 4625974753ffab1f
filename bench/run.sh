#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmarks of orlov-populate against mke2fs -d, genext2fs, a debugfs
# write script and a raw copy: wall time, peak RSS, scaling with the entry
# count and layout metrics (bench/layout.py) on several workloads, then the
# aging and in-guest traversal hooks (bench/aging.sh, bench/guest-traversal.sh)
# when present.  See bench/README.md.  Not a test: nothing here is in
# make check.
#
# usage: run.sh [--quick] [--tool PATH] [--layout PATH] [--out DIR] [--runs N]
#               [--workloads kernel,empty,empty-big,million,huge,scaling,aging,guest]
#               [--fs ext4,ext2] [--keep]
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
quick=0
tool=
layout=
out=
runs=
workloads=
fslist=
keep=0

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--tool) tool=$2; shift ;;
	--layout) layout=$2; shift ;;
	--out) out=$2; shift ;;
	--runs) runs=$2; shift ;;
	--workloads) workloads=$2; shift ;;
	--fs) fslist=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help) usage ;;
	*) echo "run.sh: unknown option $1" >&2; usage ;;
	esac
	shift
done

# Defaults: the programs of a build in the source tree, else on PATH.
for cand in "$srcdir/src/orlov-populate" "$(command -v orlov-populate 2>/dev/null)"; do
	[ -z "$tool" ] && [ -n "$cand" ] && [ -x "$cand" ] && tool=$cand
done
for cand in "$srcdir/src/orlov-layout" "$(command -v orlov-layout 2>/dev/null)"; do
	[ -z "$layout" ] && [ -n "$cand" ] && [ -x "$cand" ] && layout=$cand
done
[ -n "$tool" ] && [ -x "$tool" ] || { echo "run.sh: no orlov-populate (--tool PATH)" >&2; exit 1; }
[ -n "$layout" ] && [ -x "$layout" ] || { echo "run.sh: no orlov-layout (--layout PATH)" >&2; exit 1; }
[ -n "$out" ] || out=$PWD/bench-results
if [ -z "$runs" ]; then
	if [ $quick = 1 ]; then runs=1; else runs=3; fi
fi
# The default list; --quick leaves out the QEMU hooks unless asked for.
if [ -z "$workloads" ]; then
	if [ $quick = 1 ]; then workloads=kernel,empty,empty-big,million,huge,scaling
	else workloads=kernel,empty,empty-big,million,huge,scaling,aging,guest; fi
fi
# The file systems written, in this order: ext4 (mke2fs -t ext4 images, the
# workloads as NAME-ext4, orlov-populate with delayed allocation and with
# --no-delalloc) first, the headline, then ext2.  ext4 doubles the time of
# the workloads (bench/README.md gives the cost).
[ -n "$fslist" ] || fslist=ext4,ext2
for f in $(echo "$fslist" | tr , ' '); do
	case $f in ext2|ext4) ;; *) echo "run.sh: --fs: ext2 or ext4, not $f" >&2; exit 2 ;; esac
done
# Older names of the same workloads.
workloads=$(echo ",$workloads," | sed -e 's/,small,/,million,/g' -e 's/,large,/,huge,/g' -e 's/^,//' -e 's/,$//')
# Time limits, seconds: a tool runs again only while its runs so far plus
# one more of the last one's length stay within BUDGET (so a slow tool runs
# once); the debugfs script is stopped after DEBUGFS_MAX.
# genext2fs is stopped after GXMAX, on the one-directory empty workload
# after GXMAX_EMPTY (it is quadratic or worse in the directory size: 100,000
# entries take more than 7 minutes).
if [ $quick = 1 ]; then budget=${BENCH_BUDGET:-60}; dfsmax=${BENCH_DEBUGFS_MAX:-30}
	gxmax=${BENCH_GENEXT2FS_MAX:-60}; gxmax_empty=${BENCH_GENEXT2FS_MAX:-30}
else budget=${BENCH_BUDGET:-180}; dfsmax=${BENCH_DEBUGFS_MAX:-100}
	gxmax=${BENCH_GENEXT2FS_MAX:-300}; gxmax_empty=${BENCH_GENEXT2FS_MAX:-120}; fi
# mke2fs -d on the one-directory empty workload is stopped after MKMAX
# (quadratic there: 4 minutes for 100,000 names on ext2, 21 on ext4); the
# ratios are then bounds (orlov-populate's time / MKMAX).
if [ $quick = 1 ]; then mkmax=${BENCH_MKE2FS_MAX:-120}; else mkmax=${BENCH_MKE2FS_MAX:-600}; fi
mkdir -p "$out/metrics" "$out/logs" || exit 1
out=$(cd "$out" && pwd)
rm -f "$out"/times.tsv "$out"/cpu.tsv "$out"/spent.tsv "$out"/run.tsv "$out"/notes.txt "$out"/metrics/*.json "$out"/logs/* "$out"/*.svg "$out"/report.md "$out"/workloads.txt "$out"/entries.tsv "$out"/hooks.md
rm -rf "$out/aging" "$out/guest" "$out/aging-ext4" "$out/guest-ext4"

note() { echo "- $*" >>"$out/notes.txt"; echo "run.sh: $*" >&2; }
say() { echo "== $*" >&2; }

# ------------------------------------------------------------------ deps
PATH=$PATH:/usr/sbin:/sbin
export PATH
ksrc=/usr/src/linux-source-6.1.tar.xz
need_pkgs=
command -v mke2fs >/dev/null || need_pkgs="$need_pkgs e2fsprogs"
[ -x /usr/bin/time ] || need_pkgs="$need_pkgs time"
command -v python3 >/dev/null || need_pkgs="$need_pkgs python3"
command -v xz >/dev/null || need_pkgs="$need_pkgs xz-utils"
command -v genext2fs >/dev/null || need_pkgs="$need_pkgs genext2fs"
case ",$workloads," in *,kernel,*) [ -f "$ksrc" ] || need_pkgs="$need_pkgs linux-source-6.1" ;; esac
if [ -n "$need_pkgs" ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		say "installing$need_pkgs"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need_pkgs >"$out/logs/apt.log" 2>&1 ||
		{ apt-get update -q >>"$out/logs/apt.log" 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $need_pkgs >>"$out/logs/apt.log" 2>&1; } ||
		echo "run.sh: could not install$need_pkgs (see $out/logs/apt.log)" >&2
	else
		echo "run.sh: missing packages:$need_pkgs (run as root to install them with apt-get)" >&2
	fi
fi
for p in mke2fs dumpe2fs python3; do
	command -v $p >/dev/null || { echo "run.sh: $p is required" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time (package time) is required" >&2; exit 1; }

# ------------------------------------------------------------------ setup
export E2FSPROGS_FAKE_TIME=1700000000 SOURCE_DATE_EPOCH=1700000000
export LC_ALL=C
UUID=0b0e1c4e-5eed-4b1e-9c0d-000000000011
HASH_SEED=6e0b1a2c-0000-4d1e-8a5e-000000000011
work=$(mktemp -d "${TMPDIR:-/tmp}/orlov-bench.XXXXXX") || exit 1
# Source trees other than huge's go to a tmpfs when one has room
# (BENCH_SRCDIR, default /dev/shm with 8 GiB free): making and deleting a
# million files there takes seconds, not minutes, and a tree in the page
# cache of the scratch disk would be read from memory all the same.
# BENCH_TREES=DIR: the trees are built there once (MODE-NAME, with a
# MODE-NAME.built stamp), kept, and reused by later runs: the million tree
# alone takes minutes to generate.
trees=${BENCH_TREES-}
if [ -n "$trees" ]; then
	mkdir -p "$trees" && trees=$(cd "$trees" && pwd) || exit 1
fi
shm=
sd=${BENCH_SRCDIR-/dev/shm}
if [ -z "$trees" ] && [ -n "$sd" ] && [ -d "$sd" ] && [ -w "$sd" ] &&
   [ "$(df -Pk "$sd" 2>/dev/null | awk 'NR==2 {print $4}')" -gt $((8 << 20)) ] 2>/dev/null; then
	shm=$(mktemp -d "$sd/orlov-bench-src.XXXXXX") || shm=
fi
cleanup() {
	if [ $keep = 1 ]; then echo "run.sh: kept $work${shm:+ and $shm}" >&2
	else rm -rf "$work" ${shm:+"$shm"}; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mode=full; [ $quick = 1 ] && mode=quick
start_all=$(date +%s)

# Machine description, the head of the report.
{
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- mode: $mode ($runs run(s) per tool; workloads $workloads; file systems $fslist)"
	echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/^MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo)"
	echo "- kernel: $(uname -srm)"
	echo "- e2fsprogs: $(mke2fs -V 2>&1 | head -1)"
	if command -v genext2fs >/dev/null; then
		gv=$(genext2fs --version 2>&1 | head -1)
		dv=$(dpkg-query -W -f '${Version}' genext2fs 2>/dev/null)
		echo "- genext2fs: $gv${dv:+ (Debian package $dv)}"
	else
		echo "- genext2fs: not installed"
	fi
	rev=$(git -C "$srcdir" describe --always --dirty 2>/dev/null) || rev=
	echo "- orlov-populate: $tool${rev:+ (source $rev)}"
	fst=$(df -PT "$work" | awk 'NR==2 {print $2}')
	if [ -n "$trees" ]; then
		echo "- scratch: $work ($fst); source trees kept in $trees ($(df -PT "$trees" | awk 'NR==2 {print $2}'))"
	elif [ -n "$shm" ]; then
		echo "- scratch: $work ($fst); source trees other than huge's in $shm ($(df -PT "$shm" | awk 'NR==2 {print $2}'))"
	else
		echo "- scratch: $work ($fst)"
	fi
	echo "- load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min; 2 CPUs are shared with whatever else runs)"
} >"$out/machine.txt"
printf 'workload\ttool\trun\tseconds\trss_kib\tstatus\n' >"$out/times.tsv"
printf 'workload\ttool\trun\tseconds\tuser_s\tsys_s\trss_kib\n' >"$out/cpu.tsv"
printf 'workload\tentries\timage_mib\n' >"$out/entries.tsv"
printf 'workload\ttool\tseconds\n' >"$out/spent.tsv"
# what the report needs to know of the run itself (layout.py report)
{
	printf 'mode\t%s\n' "$mode"
	printf 'fs\t%s\n' "$fslist"
	if [ -n "$trees" ]; then printf 'srcfs\t%s\n' "$(df -PT "$trees" | awk 'NR==2 {print $2}')"
	elif [ -n "$shm" ]; then printf 'srcfs\t%s\n' "$(df -PT "$shm" | awk 'NR==2 {print $2}')"
	else printf 'srcfs\t%s\n' "$(df -PT "$work" | awk 'NR==2 {print $2}')"; fi
} >"$out/run.tsv"

note "Wall time: from the start of the command to the end of an fsync of the image it wrote (\`sync IMAGE\`), so a tool that leaves the image in the page cache pays its writeback like one that fsyncs; each run starts after a sync, so it pays for no earlier run's writeback; the source tree is in the page cache (it was just written). Each run of orlov-populate and of the debugfs script starts from a fresh copy of the same empty image, made by mke2fs outside the timing; mke2fs -d and genext2fs make the image themselves."
note "Floor: raw copy = \`bench/floor.c SRC RAW\` (built here with cc -O2, run on every CPU: $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?) threads): the contents of every regular file concatenated into one file RAW in the scratch directory (the images' file system), then fsync: the same bytes, no metadata, no padding to blocks. One unsorted walk (getdents64), an lstat per file, and for a non-empty one an open, one read and a close, the threads sharing directories, batches of 256 names and 8 MiB pieces of bigger files; the bytes go out in 8 MiB writes (copy_file_range for the big pieces). Sparse files are copied by their data ranges only (SEEK_DATA, copy_file_range), so holes stay holes. Every tool reads at least as much and writes at least these bytes with the same fsync, and uses at most the same CPUs: its ratio to the floor should be >= 1."
note "empty-big: one directory of $( [ $quick = 1 ] && echo 100,000 || echo 1,000,000 ) empty files, orlov-populate and the floor only (mke2fs -d, genext2fs and debugfs are quadratic in one directory: hours); with empty it gives the growth exponent of one directory, so that a quadratic name check cannot come back unnoticed."
note "genext2fs is run as \`genext2fs -B 4096 -b BLOCKS -N INODES -z -d SRC IMAGE\` (4 KiB blocks, same size and inode count as the other images; -z keeps holes, so the sparse file stays sparse)."
note "genext2fs is stopped after $gxmax s, on the empty workload (one directory) after $gxmax_empty s: its time grows much faster than the directory (more than 7 minutes for 100,000 entries); a stopped run is reported as such, with no image."
note "mke2fs -d (and mke2fs -t ext4 -d) on the one-directory empty workload is stopped after $mkmax s (BENCH_MKE2FS_MAX): it is quadratic there (about 4 minutes for 100,000 names into ext2, 21 into ext4, on the 2-CPU build machine); a stopped run is reported as such, and the ratios against it are bounds (< the tool's time / the limit)."
note "debugfs write = \`bench/debugfs-write.sh IMAGE SRC\`: generates a debugfs script from the tree (cd into each directory, then mkdir / write / symlink for each entry, sorted) and runs \`debugfs -w -f SCRIPT IMAGE\`; the generation is in the timing. It is stopped after $dfsmax s; then the report gives how many of the entries it made in that time, and its image is not analysed."
note "Repeats: each tool runs up to $runs times, but runs again only while its time so far plus one more run of the last one's length stays within $budget s, so a slow tool (e.g. mke2fs -d on one 100,000-entry directory) runs once and has no spread."
note "The traversal model visits entries in sorted dump order on every image (a real readdir order differs on mke2fs -d and genext2fs images)."

# ------------------------------------------------------------------ workloads
# srcof NAME: where the tree of workload NAME goes
srcof() {
	if [ -n "$trees" ]; then echo "$trees/$mode-$1"
	elif [ -n "$shm" ] && [ "$1" != huge ]; then echo "$shm/$1"; else echo "$work/src/$1"; fi
}

# mkwl NAME: builds $(srcof NAME), sets size (bytes) and inodes.
gen_py() {
	python3 - "$@" <<'PYEOF'
import os, sys, math, random
kind, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(root, exist_ok=True)
if kind == 'empty':
    d = os.path.join(root, 'files')
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        open(os.path.join(d, 'f%07d' % i), 'w').close()
elif kind == 'million':
    # n files in a balanced 3-level tree: b top dirs x b dirs x b files,
    # sizes 0..3071 bytes from a fixed LCG (the seed is the file number),
    # contents a fixed pattern.
    b = max(2, math.ceil(n ** (1 / 3)))
    pat = b''.join(b'%08d\n' % k for k in range(400))
    for i in range(n):
        a, c, k = i // (b * b), (i // b) % b, i % b
        d = os.path.join(root, 'd%03d' % a, 'e%03d' % c)
        if k == 0 or i == 0:
            os.makedirs(d, exist_ok=True)
        size = ((i * 1103515245 + 12345) >> 8) % 3072
        with open(os.path.join(d, 'f%03d' % k), 'wb') as f:
            f.write(pat[i % 7:i % 7 + size])
elif kind == 'huge':
    # n MiB per dense file: two dense files of seeded random data (each
    # MiB stamped with its number), one sparse file of 4n MiB with 1 MiB
    # of data every 256 MiB, and one hole of 4n MiB.
    rnd = random.Random(11)
    blk = bytearray(rnd.randbytes(1 << 20))
    for name, salt in (('dense-a', 0), ('dense-b', 1 << 40)):
        with open(os.path.join(root, name), 'wb') as f:
            for i in range(n):
                blk[0:8] = (salt + i).to_bytes(8, 'little')
                f.write(blk)
    with open(os.path.join(root, 'sparse'), 'wb') as f:
        for off in range(0, 4 * n, 256):
            f.seek(off << 20)
            blk[0:8] = (2 << 40 | off).to_bytes(8, 'little')
            f.write(blk)
        f.truncate(4 * n << 20)
    with open(os.path.join(root, 'hole'), 'wb') as f:
        f.truncate(4 * n << 20)
PYEOF
}

mkwl() {
	w=$1
	s=$(srcof "$w")
	if [ -n "$trees" ] && [ -f "$s.built" ]; then
		:	# built by an earlier run (BENCH_TREES): the generators are deterministic
	else
	rm -rf "$s" "$s.built"
	case $w in
	kernel)
		[ -f "$ksrc" ] || { echo "no $ksrc (package linux-source-6.1)"; return 1; }
		mkdir -p "$s"
		if [ $quick = 1 ]; then
			tar -xJf "$ksrc" -C "$s" --strip-components=1 \
				linux-source-6.1/fs linux-source-6.1/kernel \
				linux-source-6.1/include linux-source-6.1/net || return 1
		else
			tar -xJf "$ksrc" -C "$s" --strip-components=1 || return 1
		fi
		;;
	empty) if [ $quick = 1 ]; then n=10000; else n=100000; fi
		gen_py empty "$s" $n || return 1 ;;
	empty-big) if [ $quick = 1 ]; then n=100000; else n=1000000; fi
		gen_py empty "$s" $n || return 1 ;;
	million) if [ $quick = 1 ]; then n=20000; else n=1000000; fi
		gen_py million "$s" $n || return 1 ;;
	scale-*) n=${w#scale-}; n=$(echo "$n" | sed -e 's/k$/000/' -e 's/M$/000000/')
		gen_py million "$s" "$n" || return 1 ;;
	huge) if [ $quick = 1 ]; then n=64; else n=2048; fi
		gen_py huge "$s" $n || return 1 ;;
	*) echo "unknown workload $w"; return 1 ;;
	esac
	[ -z "$trees" ] || : >"$s.built"
	fi
	entries=$(find "$s" | wc -l)
	inodes=$(( (entries * 5 / 4 + 4096 + 4095) / 4096 * 4096 ))
	if [ "$w" = kernel ]; then
		size=$((2 << 30))
	else
		kib=$(du -sk "$s" | cut -f1)
		size=$(( kib * 1024 / 10 * 13 + inodes * 256 / 10 * 11 + (64 << 20) ))
		size=$(( (size + (4 << 20) - 1) / (4 << 20) * (4 << 20) ))
	fi
	echo "$w: $entries entries, $(du -sh --apparent-size "$s" | cut -f1) apparent, $(du -sh "$s" | cut -f1) allocated; image $((size >> 20)) MiB, $inodes inodes" >>"$out/workloads.txt"
	printf '%s\t%s\t%s\n' "$w" "$entries" $((size >> 20)) >>"$out/entries.tsv"
	return 0
}

mkfs_args() { # fs inodes
	if [ "$1" = ext4 ]; then
		# lazy_itable_init pinned: mke2fs's default depends on the host
		# kernel (/sys/fs/ext4/features/lazy_itable_init)
		echo "-F -q -t ext4 -b 4096 -N $2 -U $UUID -E hash_seed=$HASH_SEED,lazy_itable_init=1"
	else
		echo "-F -q -t ext2 -b 4096 -N $2 -U $UUID -E hash_seed=$HASH_SEED"
	fi
}

# timeit W T RUN IMAGE-or-empty CMD...: one timed run into times.tsv;
# sets sec.  Exit 124 (timeout) is recorded as a partial run.
timeit() {
	tw=$1 tt=$2 tr=$3 timg=$4; shift 4
	sync
	log=$out/logs/$tw.$tt.$tr.log
	t0=$(date +%s.%N)
	/usr/bin/time -f '%M %U %S' -o "$work/rss" "$@" >"$log" 2>&1
	rc=$?
	if [ -n "$timg" ] && [ -f "$timg" ]; then sync "$timg"; fi
	t1=$(date +%s.%N)
	rss=$(tail -1 "$work/rss" 2>/dev/null | cut -d' ' -f1 | tr -cd 0-9)
	cpu=$(tail -1 "$work/rss" 2>/dev/null | awk 'NF == 3 {printf "%.2f\t%.2f", $2, $3}')
	sec=$(echo "$t0 $t1" | awk '{printf "%.4f", $2 - $1}')
	if [ $rc = 0 ]; then st=ok
	elif [ $rc = 124 ] && [ "$tt" = debugfs ]; then
		done_=$(grep -c '^debugfs: \(write\|mkdir\|symlink\) ' "$log")
		st="partial: $done_ of $((entries - 1)) entries in ${sec%??} s (stopped at the ${dfsmax} s limit)"
	elif [ $rc = 124 ]; then
		st="stopped: still running after ${sec%??} s (the limit), no image"
	else st="failed (exit $rc, log logs/$tw.$tt.$tr.log)"; fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tw" "$tt" "$tr" "$sec" "${rss:-0}" "$st" >>"$out/times.tsv"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tw" "$tt" "$tr" "$sec" "${cpu:-0	0}" "${rss:-0}" >>"$out/cpu.tsv"
	# debugfs echoes every command: keep the end of it only
	if [ "$tt" = debugfs ] && [ "$(wc -l <"$log")" -gt 200 ]; then
		tail -n 100 "$log" >"$log.tail" && mv "$log.tail" "$log"
	fi
	printf '   %-13s run %s: %8ss  cpu %s  %6s KiB  %s\n' "$tt" "$tr" "$sec" "$(echo "${cpu:-?}" | tr '\t' +)" "${rss:-?}" "$st" >&2
	return $rc
}

# again I: whether to do run I+1 (the run budget, above)
spent=0
again() {
	spent=$(echo "$spent $sec" | awk '{printf "%.4f", $1 + $2}')
	[ "$1" -lt "$runs" ] && awk -v a="$spent" -v b="$sec" -v c="$budget" 'BEGIN {exit !(a + b <= c)}'
}

# measure W T new|copy IMAGE CMD...: run CMD as tool T of workload W (run
# 1, 2, ... while again says so) on IMAGE removed first ("new": CMD makes
# it), or a fresh copy of the empty image ("copy").  Status 0 when every
# run succeeded: the last run's IMAGE can then be analysed.
measure() {
	mw=$1 mt=$2 mprep=$3 mimg=$4; shift 4
	spent=0; i=1
	while :; do
		rm -f "$mimg"
		[ "$mprep" = copy ] && cp --sparse=always "$empty" "$mimg"
		# nothing dirty left from the copy or an earlier run: each run
		# pays for its own writeback only
		sync
		timeit "$mw" "$mt" $i "$mimg" "$@" || return 1
		again $i || return 0
		i=$((i + 1))
	done
}

# run_tool W T new|copy IMAGE CMD...: measure, then analyse the last run's
# image (not the floor's nor the empty image's); the time of both, to
# spent.tsv (what each tool costs the whole run)
run_tool() {
	rw=$1 rt=$2 rimg=$4
	r0=$(date +%s.%N)
	if measure "$@"; then
		case $rt in raw-copy|mke2fs-empty) ;; *) analyse "$rw" "$rt" "$rimg" ;; esac
	fi
	printf '%s\t%s\t%s\n' "$rw" "$rt" "$(echo "$r0 $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}')" >>"$out/spent.tsv"
}

skip() { # W T reason
	printf '%s\t%s\t0\t0\t0\t%s\n' "$1" "$2" "$3" >>"$out/times.tsv"
	note "$1: $2 skipped: $3"
}

# analyse W T IMAGE: e2fsck, dump, dumpe2fs, metrics
analyse() {
	aw=$1 at=$2 aimg=$3
	case $aw in scale-*|empty-big*) return 0 ;; esac	# timing only
	[ "${BENCH_LAYOUT:-1}" = 0 ] && return 0
	if ! e2fsck -fn "$aimg" >"$out/logs/$aw.$at.fsck.log" 2>&1; then
		note "$aw: e2fsck -fn reports problems in the $at image (logs/$aw.$at.fsck.log)"
	fi
	if "$layout" dump "$aimg" >"$work/dump" 2>"$out/logs/$aw.$at.dump.log" &&
	   dumpe2fs "$aimg" >"$work/dumpe2fs" 2>/dev/null &&
	   python3 "$here/layout.py" metrics "$work/dump" "$work/dumpe2fs" \
		>"$out/metrics/$aw.$at.json"; then
		:
	else
		rm -f "$out/metrics/$aw.$at.json"
		note "$aw: no layout metrics for the $at image (logs/$aw.$at.dump.log)"
	fi
	rm -f "$work/dump" "$work/dumpe2fs"
}

# hook NAME SCRIPT MD [FS]: the aging / in-guest contract (bench/README.md);
# FS ext4: the script gets --fs ext4 and NAME becomes NAME-ext4
hook() {
	hn=$1 hs=$2 hmd=$3 hfs=${4:-ext2}
	hx=
	[ "$hfs" = ext2 ] || { hx="--fs $hfs"; hn=$hn-$hfs; }
	say "$hn: $hs"
	if [ ! -x "$here/$hs" ]; then
		printf '\n## %s\n\nNot run: bench/%s is not there (or not executable) in this tree.\n' "$hn" "$hs" >>"$out/hooks.md"
		note "$hn: not run, no bench/$hs"
		return
	fi
	mkdir -p "$out/$hn"
	th=$(date +%s)
	# shellcheck disable=SC2086
	if [ $quick = 1 ]; then
		"$here/$hs" --tool "$tool" --layout "$layout" --out "$out/$hn" --quick $hx >"$out/logs/$hn.stdout" 2>"$out/logs/$hn.stderr"
	else
		"$here/$hs" --tool "$tool" --layout "$layout" --out "$out/$hn" $hx >"$out/logs/$hn.stdout" 2>"$out/logs/$hn.stderr"
	fi
	rc=$?
	th=$(( $(date +%s) - th ))
	case $rc in
	0)	if [ -f "$out/$hn/$hmd" ]; then
			{ echo; cat "$out/$hn/$hmd"; } >>"$out/hooks.md"
			for f in "$out/$hn"/*.svg; do [ -f "$f" ] && cp "$f" "$out/"; done
			note "$hn: bench/$hs ran in $th s; its report is appended below"
		else
			printf '\n## %s\n\nbench/%s exited 0 in %s s but wrote no %s.\n' "$hn" "$hs" "$th" "$hmd" >>"$out/hooks.md"
			note "$hn: bench/$hs wrote no $hmd"
		fi ;;
	77)	why=$(head -1 "$out/logs/$hn.stdout")
		printf '\n## %s\n\nSkipped by bench/%s: %s\n' "$hn" "$hs" "${why:-(no reason given)}" >>"$out/hooks.md"
		note "$hn: skipped: ${why:-(no reason given)}" ;;
	*)	printf '\n## %s\n\nbench/%s failed (exit %s after %s s); see logs/%s.stderr.\n' "$hn" "$hs" "$rc" "$th" "$hn" >>"$out/hooks.md"
		note "$hn: bench/$hs failed (exit $rc after $th s, logs/$hn.stderr)" ;;
	esac
}

# The floor is a C program, built here: on every CPU, with no interpreter
# between it and its system calls (bench/floor.c).
floor=$work/floor
if ! ${CC:-cc} -O2 -Wall -Wextra -pthread -o "$floor" "$here/floor.c" >"$out/logs/floor-build.log" 2>&1; then
	note "the floor (bench/floor.c) did not build: logs/floor-build.log"
	floor=
fi
have_genext2fs=0
command -v genext2fs >/dev/null && have_genext2fs=1
have_debugfs=0
command -v debugfs >/dev/null && command -v timeout >/dev/null && have_debugfs=1

# Expand the list: scaling = the million generator at two smaller sizes
# (the third point is the million workload itself); the hooks go last.
wl=
hooks=
for w in $(echo "$workloads" | tr , ' '); do
	case $w in
	scaling) if [ $quick = 1 ]; then wl="$wl scale-2k scale-5k"; else wl="$wl scale-10k scale-100k"; fi ;;
	aging|guest) hooks="$hooks $w" ;;
	*) wl="$wl $w" ;;
	esac
done

# wkey W FS: the workload's name in times.tsv, metrics/ and logs/: W for
# ext2 (as before --fs), W-ext4 for ext4
wkey() { if [ "$2" = ext4 ]; then echo "$1-ext4"; else echo "$1"; fi; }

# The ext4 images take their features from the tree's mke2fs.conf (Debian
# 12's ext4 stanza), not the host's, so that runs compare across machines;
# ext2's keep whatever MKE2FS_CONFIG says, as before --fs.
conf4=$srcdir/images/mke2fs.conf
case ",$fslist," in *,ext4,*)
	[ -f "$conf4" ] || { echo "run.sh: no $conf4 for the ext4 images" >&2; exit 1; }
	note "ext4 images: \`mke2fs -t ext4 -b 4096 -N INODES -U (fixed) -E hash_seed=(fixed),lazy_itable_init=1\` with MKE2FS_CONFIG=images/mke2fs.conf of the tree (Debian 12's ext4 features), the ext2 image's size plus 128 MiB for the journal (kernel: 2 GiB). orlov-populate on them: its default (the ext4 driver with delayed allocation, as a default mount) and --no-delalloc; \`mke2fs -t ext4 -d\` and the debugfs script write ext4 images too; genext2fs and --policy oldalloc are ext2 only. The model reads ahead 32 inode-table blocks with each one it must read, as the ext4 driver does (inode_readahead_blks). The floor runs once per workload, under the first file system of --fs."
	;;
esac
mke2fs_config0=${MKE2FS_CONFIG-}
use_fs() { # FS: the mke2fs configuration of its images
	if [ "$1" = ext4 ]; then export MKE2FS_CONFIG="$conf4"
	elif [ -n "$mke2fs_config0" ]; then export MKE2FS_CONFIG="$mke2fs_config0"
	else unset MKE2FS_CONFIG; fi
}

for w in $wl; do
	say "workload $w: building"
	tb=$(date +%s)
	if ! mkwl "$w" >"$work/wlmsg" 2>&1; then
		msg=$(tr '\n' ' ' <"$work/wlmsg")
		for fs in $(echo "$fslist" | tr , ' '); do
			if [ "$fs" = ext4 ]; then tl="orlov orlov-nodelalloc mke2fs-d debugfs raw-copy"
			else tl="orlov oldalloc mke2fs-d genext2fs debugfs raw-copy"; fi
			for t in $tl; do skip "$(wkey "$w" "$fs")" "$t" "workload not built: $msg"; done
		done
		continue
	fi
	say "$(tail -1 "$out/workloads.txt") (built in $(( $(date +%s) - tb )) s)"
	src=$(srcof "$w")
	first=1
	for fs in $(echo "$fslist" | tr , ' '); do
		tw0=$(date +%s)
		wk=$(wkey "$w" "$fs")
		use_fs "$fs"
		fsize=$size
		if [ "$fs" = ext4 ]; then
			[ "$w" = kernel ] || fsize=$((size + (128 << 20)))
			printf '%s\t%s\t%s\n' "$wk" "$entries" $((fsize >> 20)) >>"$out/entries.tsv"
		fi
		empty=$work/empty.img
		img=$work/img
		rm -f "$empty"
		# shellcheck disable=SC2046
		mke2fs $(mkfs_args "$fs" "$inodes") "$empty" $((fsize / 4096)) >"$out/logs/$wk.mkfs.log" 2>&1 ||
			{ note "$wk: mke2fs of the empty image failed"; continue; }

		# The floor first, once per workload (it writes no file system).
		# The tree was just written (generated or extracted), so it is in
		# the page cache already.
		if [ $first = 1 ]; then
			if [ -n "$floor" ]; then
				run_tool "$wk" raw-copy new "$work/raw" "$floor" "$src" "$work/raw"
			else
				skip "$wk" raw-copy "bench/floor.c did not build"
			fi
			rm -f "$work/raw"
		fi
		first=0
		# shellcheck disable=SC2046
		run_tool "$wk" mke2fs-empty new "$img" mke2fs $(mkfs_args "$fs" "$inodes") "$img" $((fsize / 4096))

		run_tool "$wk" orlov copy "$img" "$tool" "$img" "$src"
		if [ "$fs" = ext2 ]; then
			run_tool "$wk" oldalloc copy "$img" "$tool" --policy oldalloc "$img" "$src"
		else
			run_tool "$wk" orlov-nodelalloc copy "$img" "$tool" --no-delalloc "$img" "$src"
		fi
		if [ "$w" = empty-big ]; then
			# the growth exponent of one directory (orlov-populate
			# only): the others are quadratic in it, hours at 1M
			rm -f "$img" "$empty"
			say "$wk: done in $(( $(date +%s) - tw0 )) s after building"
			continue
		fi
		# on one directory, stopped after MKMAX (quadratic there)
		tmo=
		[ "$w" = empty ] && command -v timeout >/dev/null && tmo="timeout $mkmax"
		# shellcheck disable=SC2046,SC2086
		run_tool "$wk" mke2fs-d new "$img" $tmo mke2fs $(mkfs_args "$fs" "$inodes") -d "$src" "$img" $((fsize / 4096))

		if [ "$fs" = ext4 ]; then
			:	# genext2fs writes ext2 only
		elif [ $have_genext2fs = 1 ]; then
			lim=$gxmax; [ "$w" = empty ] && lim=$gxmax_empty
			run_tool "$wk" genext2fs new "$img" timeout "$lim" genext2fs -B 4096 -b $((fsize / 4096)) -N "$inodes" -z -d "$src" "$img"
		else
			skip "$wk" genext2fs "genext2fs not installed"
		fi

		if [ $have_debugfs = 1 ]; then
			run_tool "$wk" debugfs copy "$img" timeout "$dfsmax" sh "$here/debugfs-write.sh" "$img" "$src"
		else
			skip "$wk" debugfs "debugfs or timeout not installed"
		fi
		rm -f "$img" "$empty"
		say "$wk: done in $(( $(date +%s) - tw0 )) s after building"
	done
	use_fs ext2
	[ $keep = 1 ] || [ -n "$trees" ] || rm -rf "$src"
done

if [ -f "$out/workloads.txt" ]; then
	{ echo; echo "Workloads:"; echo; sed 's/^/- /' "$out/workloads.txt"; } >>"$out/notes.txt"
fi
echo "- time of the workloads before the hooks: $(( $(date +%s) - start_all )) s" >>"$out/machine.txt"
for h in $hooks; do
	for fs in $(echo "$fslist" | tr , ' '); do
		case $h in
		aging) hook aging aging.sh aging.md "$fs" ;;
		guest) hook guest guest-traversal.sh guest.md "$fs" ;;
		esac
	done
done
echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
echo "- total benchmark time: $(( $(date +%s) - start_all )) s" >>"$out/machine.txt"
python3 "$here/layout.py" report "$out" || exit 1
echo "run.sh: report in $out/report.md" >&2
