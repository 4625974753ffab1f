#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh FUZZER RUNS: seed a corpus with small images of every kind the
# tools take (1, 2 and 4 KiB blocks, small and large inodes, attributes
# in blocks and in inodes, an htree, slow symlinks, indirect blocks, an
# ext4 image of extents and flex groups) and
# run the libFuzzer target on RUNS inputs from it, with a fixed seed (the
# same inputs every time).  A crash fails the run and leaves its input in
# tests/fuzz/crash-*.
set -eu
fuzzer=$1 runs=$2
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/../.." && pwd)
populate=${ORLOV_POPULATE:-$PWD/src/orlov-populate}
export MKE2FS_CONFIG=$top_srcdir/images/mke2fs.conf E2FSPROGS_FAKE_TIME=1700000000
work=$(mktemp -d "${TMPDIR:-/tmp}/orlov-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/seeds" "$work/corpus" "$work/src/d/e"
printf 'data\n' >"$work/src/d/f"
head -c 14000 /dev/zero | tr '\0' 'i' >"$work/src/d/e/ind"
ln -s "/$(printf 's%.0s' $(seq 1 70))" "$work/src/d/slow"
ln -s d/f "$work/src/fast"
for i in $(seq 1 40); do : >"$work/src/d/e/name-$i-long-enough-to-fill"; done
setfattr -n user.k -v v "$work/src/d/f" 2>/dev/null || true
n=0
for spec in "-b 1024 -I 128 128K" "-b 1024 -I 256 -O dir_index 128K" \
	    "-b 2048 -I 128 256K" "-b 4096 -I 256 256K" \
	    "-b 1024 -I 256 -O extent,flex_bg,64bit,metadata_csum,huge_file,dir_nlink,extra_isize 256K"; do
	n=$((n + 1))
	set -- $spec
	size=$(eval echo \${$#})
	opts=$(echo "$spec" | sed 's/ [^ ]*$//')
	mke2fs -q -F -t ext2 -N 64 $opts "$work/seeds/$n.img" "$size" >/dev/null 2>&1
	tune2fs -o user_xattr "$work/seeds/$n.img" >/dev/null 2>&1 || true
	drv=
	case $spec in *dir_index*) drv="--driver ext4" ;; esac
	"$populate" -q $drv "$work/seeds/$n.img" "$work/src" ||
		{ echo "run.sh: seed image $n" >&2; exit 1; }
done
"$fuzzer" -runs="$runs" -seed=1 -max_total_time=900 -timeout=10 -rss_limit_mb=1024 \
	-max_len=262144 -artifact_prefix="$PWD/tests/fuzz/" -print_final_stats=1 \
	"$work/corpus" "$work/seeds" 2>"$work/log" || {
	tail -40 "$work/log" >&2
	exit 1
}
done=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log")
echo "fuzz: $done executions in ${secs:-?} s (seed 1), no crash, no leak, no sanitizer report"
