# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the tool's shell tests (sourced).  make check sets
# ORLOV_POPULATE, ORLOV_LAYOUT, top_srcdir and pins TZ/LC_ALL; running a
# test by hand from the build directory works too.
set -u
export LC_ALL=C TZ=UTC E2FSPROGS_FAKE_TIME=1700000000
t_here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$t_here/.." && pwd)}
export MKE2FS_CONFIG=$top_srcdir/images/mke2fs.conf
: "${ORLOV_POPULATE:=$PWD/src/orlov-populate}"
: "${ORLOV_LAYOUT:=$PWD/src/orlov-layout}"
# orlov-populate running $ORLOV_RACE between its passes, built for the
# tests only (tests/race-populate.c): the shipped programs have no such hook
: "${ORLOV_RACE_POPULATE:=${top_builddir:-$PWD}/tests/race-populate}"
# orlov-populate reading the test hooks ORLOV_FAULT and ORLOV_STAGE_BUDGET,
# built for the tests only (tests/Makefile.inc): the shipped ones read none
: "${ORLOV_HOOKS_POPULATE:=${top_builddir:-$PWD}/tests/orlov-populate-hooks}"
T_UUID=6f726c6f-0000-4000-8000-000000000001
T_SEED=6f726c6f-0000-4000-8000-000000000002

t_name=${0##*/}
t_fail() { echo "$t_name: FAIL: $*" >&2; exit 1; }
t_skip() { echo "$t_name: skipped: $*" >&2; exit 77; }
for c in mke2fs e2fsck debugfs; do
	command -v $c >/dev/null 2>&1 || t_skip "$c not found (e2fsprogs)"
done
[ -x "$ORLOV_POPULATE" ] || t_fail "no $ORLOV_POPULATE"
[ -x "$ORLOV_LAYOUT" ] || t_fail "no $ORLOV_LAYOUT"

T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/orlov-test.XXXXXX")
trap 'rm -rf "$T_TMP"' EXIT

# t_mkimage FILE SIZE MKE2FS-OPTIONS...: a reproducible image.
t_mkimage() {
	local img=$1 size=$2
	shift 2
	rm -f "$img"
	mke2fs -q -F -U $T_UUID -E hash_seed=$T_SEED,root_owner=0:0 "$@" \
		"$img" "$size" >/dev/null || t_fail "mke2fs $* $img"
}

# t_fsck IMAGE: e2fsck -fn must find nothing.
t_fsck() {
	local out
	out=$(e2fsck -fn "$1" 2>&1) || { echo "$out" >&2; t_fail "e2fsck -fn $1"; }
}

# t_verify IMAGE SOURCE [PATH]: contents read back equal the source (its
# times clamped to SOURCE_DATE_EPOCH, when set, as orlov-populate did).
t_clamp=${SOURCE_DATE_EPOCH:+--clamp}
t_verify() {
	"$ORLOV_LAYOUT" verify $t_clamp "$@" >"$T_TMP/verify.out" 2>&1 ||
		{ cat "$T_TMP/verify.out" >&2; t_fail "verify $*"; }
}

# t_pin_times DIR: every entry gets the same mtime/atime (nanoseconds
# included) so that trees made by the tests compare across runs.
t_pin_times() {
	find "$1" -depth -exec touch -h -d '2023-11-14 22:13:20.123456789' {} +
}

# t_many_names DIR: 300 one-byte files of longer names in DIR, an htree
# of 1 KiB blocks for the ext4 driver (the ext4 cases' tree of t-golden.sh).
t_many_names() {
	local i=0
	mkdir -p "$1" || t_fail "mkdir $1"
	while [ $i -lt 300 ]; do
		printf 'x' >"$1/a-longer-name-$i"
		i=$((i + 1))
	done
}

# t_sample_tree DIR: a small tree with every file type the ext2 driver
# stores, sizes across the direct/indirect boundaries of 1 KiB blocks,
# holes, links and names that sort differently in C and other locales.
t_sample_tree() {
	local d=$1 i
	mkdir -p "$d"/usr/bin "$d"/usr/lib/deep/er/est "$d"/etc "$d"/home/a \
		"$d"/home/B "$d"/var/log "$d"/srv "$d"/opt
	printf 'root:x:0:0::/root:/bin/sh\n' >"$d/etc/passwd"
	: >"$d/etc/empty"
	head -c 12288 /dev/zero | tr '\0' 'a' >"$d/usr/bin/twelve"	# 12 blocks
	head -c 13312 /dev/zero | tr '\0' 'b' >"$d/usr/bin/thirteen"	# first indirect
	head -c 300000 /dev/zero | tr '\0' 'c' >"$d/usr/lib/big"	# double indirect at 1k
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		printf 'log line %s\n' $i >"$d/var/log/l$i"
	done
	truncate -s 1048576 "$d/var/log/sparse"
	printf 'head' | dd of="$d/var/log/sparse" conv=notrunc status=none
	printf 'tail' | dd of="$d/var/log/sparse" bs=1 seek=983040 conv=notrunc status=none
	ln -s ../lib/big "$d/usr/bin/fast"
	ln -s "/$(printf 'x%.0s' $(seq 1 80))/slow/target" "$d/usr/bin/slow"
	ln "$d/etc/passwd" "$d/home/a/passwd-link"
	ln "$d/etc/passwd" "$d/usr/lib/deep/er/est/passwd-link2"
	mkfifo "$d/srv/fifo"
	chmod 4755 "$d/usr/bin/twelve"
	chmod 1777 "$d/srv"
	chmod 2750 "$d/opt"
	printf 'Z' >"$d/home/Z"
	printf 'a' >"$d/home/a-"
	printf 'u' >"$d/home/_"
	t_pin_times "$d"
}

# t_same_image WHAT FILL-A FILL-B: on a 4 MiB ext2 image of 128-byte
# inodes and on an ext4 one of 256-byte inodes, the commands FILL-A IMAGE
# and FILL-B IMAGE (each an orlov-populate run) give cmp-identical images
# (else "MKE2FS-OPTIONS: WHAT differ").
t_same_image() {
	local mk
	for mk in "-t ext2 -b 1024 -I 128" "-t ext4 -b 1024 -I 256"; do
		# shellcheck disable=SC2086
		t_mkimage "$T_TMP/same-a.img" 4M $mk
		cp "$T_TMP/same-a.img" "$T_TMP/same-b.img"
		$2 "$T_TMP/same-a.img" || t_fail "$2 ($mk)"
		$3 "$T_TMP/same-b.img" || t_fail "$3 ($mk)"
		cmp "$T_TMP/same-a.img" "$T_TMP/same-b.img" || t_fail "$mk: $1 differ"
	done
}

# Labels (--file-contexts), as setfiles gives them and the kernel stores
# them.  t_ctype LETTER: t_m, the type matchpathcon -m looks up a path of
# find -printf's %y LETTER with; t_context FILE_CONTEXTS TYPE PATH: the
# label matchpathcon gives (nothing for <<none>>); t_label IMAGE PATH:
# PATH's security.selinux in IMAGE without its NUL (nothing without one).
t_ctype() {
	case $1 in
	d) t_m=dir ;; l) t_m=lnk_file ;; p) t_m=pipe ;; c) t_m=chr_file ;;
	*) t_m=file ;;
	esac
}
t_context() {
	local want
	want=$(matchpathcon -n -f "$1" -m "$2" "$3") || return 1
	[ "$want" = "<<none>>" ] || printf '%s\n' "$want"
}
t_label() {
	debugfs -R "ea_get \"$2\" security.selinux" "$1" 2>/dev/null |
		sed -n 's/^security\.selinux ([0-9]*) = "\(.*\)\\000"$/\1/p'
}

# t_ramdir: a directory in RAM for scratch files (/dev/shm), else TMPDIR's:
# for tests whose many small runs would otherwise wait on the syncs of
# copies and commits (a SIGKILL leaves what was written in the page cache
# either way, so a disk proves nothing more).
t_ramdir() {
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then
		echo /dev/shm
	else
		echo "${TMPDIR:-/tmp}"
	fi
}
