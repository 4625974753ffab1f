# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the tests/layout/ scripts (sourced, not executed).
#
# Environment honoured:
#   srcdir, top_srcdir, top_builddir, builddir   as set by automake
#   ORLOV_LAYOUT   the tool (default $builddir/src/orlov-layout)
#   ORLOV_POPULATE orlov-populate, for the tests that make images with it
#                  (default $builddir/src/orlov-populate; those parts are
#                  skipped when it is missing)

# Pinned so that images, and so the goldens, come out byte for byte the same.
export LC_ALL=C TZ=UTC
export E2FSPROGS_FAKE_TIME=1700000000

lt_here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "${top_srcdir:-$lt_here/../..}" && pwd)
# A user's ~/.mke2fs.conf or MKE2FS_CONFIG must not change the geometry: the
# project's pinned configuration, the same the tool's own tests use.
export MKE2FS_CONFIG=$top_srcdir/images/mke2fs.conf
# make check runs the tests from the top build directory.
builddir=$(cd "${builddir:-${top_builddir:-.}}" && pwd)
if [ -z "${ORLOV_LAYOUT:-}" ]; then
	ORLOV_LAYOUT=$builddir/src/orlov-layout
	[ -x "$ORLOV_LAYOUT" ] || ORLOV_LAYOUT=$top_srcdir/src/orlov-layout
fi
: "${ORLOV_POPULATE:=$builddir/src/orlov-populate}"
golden=$lt_here/golden

LT_UUID=6f1d1e2c-0000-4000-8000-000000000001
LT_HASH=6f1d1e2c-0000-4000-8000-000000000002

lt_log() { echo "${0##*/}: $*" >&2; }
lt_fail() { echo "${0##*/}: FAIL: $*" >&2; exit 1; }
lt_skip() { echo "${0##*/}: skipped: $*"; exit 77; }

lt_need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || lt_skip "$c not found"
	done
}

lt_need mke2fs debugfs cmp
[ -x "$ORLOV_LAYOUT" ] || lt_skip "no $ORLOV_LAYOUT (build it, or set ORLOV_LAYOUT)"

lt_tmp=$(mktemp -d "${TMPDIR:-/tmp}/orlov-layout-test.XXXXXX")
trap 'rm -rf "$lt_tmp"' EXIT

# lt_mkfs IMAGE SIZE [mke2fs options...]: a fixed ext2 filesystem
lt_mkfs() {
	local img=$1 size=$2
	shift 2
	rm -f "$img"
	mke2fs -q -F -t ext2 -U "$LT_UUID" -E hash_seed="$LT_HASH" \
		"$@" "$img" "$size" >/dev/null 2>&1 ||
		lt_fail "mke2fs $* $img $size"
}

# lt_debugfs IMAGE: run the commands on stdin with debugfs -w, checking
# that none of them complained (debugfs itself always exits 0).
lt_debugfs() {
	local out
	out=$(debugfs -w -f - "$1" 2>&1) || lt_fail "debugfs on $1: $out"
	if printf '%s\n' "$out" | grep -v -e '^debugfs' -e '^Allocated inode' \
		| grep -q .; then
		lt_fail "debugfs on $1: $out"
	fi
}

# lt_run EXPECTED_STATUS CMD...: stdout to $lt_tmp/out, stderr to .../err
lt_run() {
	local want=$1 rc=0
	shift
	"$@" >"$lt_tmp/out" 2>"$lt_tmp/err" || rc=$?
	if [ "$rc" != "$want" ]; then
		cat "$lt_tmp/out" "$lt_tmp/err" >&2
		lt_fail "$* exited $rc, expected $want"
	fi
}

# lt_same_text EXPECTED_FILE ACTUAL_FILE WHAT
lt_same_text() {
	if ! cmp -s "$1" "$2"; then
		diff -u "$1" "$2" >&2 || true
		lt_fail "$3 differs from $1"
	fi
}

# Deterministic non-zero content (debugfs write turns zero blocks into holes).
lt_data() { # lt_data BYTES SEED
	yes "orlov-$2" | head -c "$1"
}

# lt_golden NAME ACTUAL WHAT: compare with golden/NAME; with
# ORLOV_REGEN_GOLDEN=1, (re)write the golden instead (review the diff!).
lt_golden() {
	if [ "${ORLOV_REGEN_GOLDEN:-0}" = 1 ]; then
		cp "$2" "$golden/$1"
		lt_log "wrote $golden/$1"
		return 0
	fi
	lt_same_text "$golden/$1" "$2" "$3"
}

# lt_block_size IMAGE
lt_block_size() {
	local bs
	bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Block size: *//p')
	case $bs in ''|*[!0-9]*) lt_fail "no block size for $1" ;; esac
	echo "$bs"
}

# lt_inode_at IMAGE PATH: the byte offset of PATH's inode in IMAGE (the
# block and offset that debugfs imap gives).
lt_inode_at() {
	local out blk off
	out=$(debugfs -R "imap \"$2\"" "$1" 2>&1)
	blk=$(printf '%s\n' "$out" | sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-fA-F]*\).*/\1/p')
	off=$(printf '%s\n' "$out" | sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-fA-F]*\).*/\2/p')
	[ -n "$blk" ] && [ -n "$off" ] || lt_fail "imap $2 in $1: $out"
	echo $((blk * $(lt_block_size "$1") + off))
}

# lt_peek_u16 FILE OFFSET: a little-endian 16-bit field
lt_peek_u16() {
	local b lo hi
	b=$(od -An -tu1 -j "$2" -N 2 "$1") || lt_fail "reading $1 at $2"
	read -r lo hi <<<"$b"
	[ -n "$hi" ] || lt_fail "short read of $1 at $2"
	echo $((lo + 256 * hi))
}

# lt_poke FILE OFFSET HEX...: overwrite bytes (two hex digits each) at
# OFFSET, as a deliberate corruption.
lt_poke() {
	local f=$1 at=$2 fmt='' b
	shift 2
	for b in "$@"; do fmt="$fmt\\x$b"; done
	printf "$fmt" | dd of="$f" bs=1 seek="$at" conv=notrunc status=none ||
		lt_fail "writing $f at $at"
}
