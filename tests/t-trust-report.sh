#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What a run reports (issue 20, items 12 and 15-21): --json is one valid
# JSON object on standard output, also on an error, with one encoding for
# names that are not UTF-8; a tree too big is told in figures; --dry-run
# --create; UUIDs that follow the tree; --create auto of tiny trees;
# what an IMAGE that is no ext2 filesystem is; messages that name the
# cause; the seconds of the summary; orlov-layout verify of archives and
# device tables.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || t_skip "no python3"
export SOURCE_DATE_EPOCH=1700000000

# valid FILE: FILE is one JSON object (python3 -m json.tool reads it)
valid() {
	python3 -m json.tool "$1" >/dev/null 2>&1 ||
		{ cat "$1" >&2; t_fail "$2: not valid JSON"; }
}
# jget FILE KEY: the value, a string's %XX decoded to bytes (shown as
# Python's bytes repr)
jget() {
	python3 -c '
import json, sys, urllib.parse
v = json.load(open(sys.argv[1])).get(sys.argv[2])
if isinstance(v, str):
    v = repr(urllib.parse.unquote_to_bytes(v))
print(v)' "$1" "$2"
}

src=$T_TMP/src
mkdir -p "$src/d"
printf 'x' >"$src/d/f"
img=$T_TMP/img

# T_ITEMS="18 17": only those items (to show each fails on an old build)
item() {
	case " ${T_ITEMS:-$1} " in *" $1 "*) return 0 ;; esac
	return 1
}

# ---- 18: --json with -v, errors, names -------------------------------------
item18() {
t_mkimage "$img" 4M -t ext2 -b 1024
"$ORLOV_POPULATE" --json -v "$img" "$src" >"$T_TMP/out" 2>"$T_TMP/err" ||
	t_fail "18: --json -v failed"
valid "$T_TMP/out" "18: --json -v"
grep -q '^/d/f [0-9]* [0-9]*$' "$T_TMP/err" || t_fail "18: -v lines not on stderr"
echo "18: --json -v: one JSON object on stdout, entries on stderr"
}

item18b() {

# an error under --json: still one JSON object, and the one-line message
t_mkimage "$img" 4M -t ext2 -b 1024
"$ORLOV_POPULATE" --json "$img" "$T_TMP/nope" >"$T_TMP/out" 2>"$T_TMP/err" &&
	t_fail "18: a missing SOURCE passed"
valid "$T_TMP/out" "18: error"
[ "$(jget "$T_TMP/out" ok)" = False ] || t_fail "18: error: ok is not false"
[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "18: error: not one line on stderr"
"$ORLOV_POPULATE" --json --policy x "$img" "$src" >"$T_TMP/out" 2>/dev/null &&
	t_fail "18: a usage error passed"
valid "$T_TMP/out" "18: usage error"
echo "18: errors under --json: a JSON object with ok false"
}

item18c() {

# names: UTF-8 passed through, other bytes (and '%') as %XX
u=$(printf 'gr\303\274n')	# grün
b=$(printf 'b\377%%')		# b, byte 0xff, %
mkdir -p "$T_TMP/$u" "$T_TMP/$b"
t_mkimage "$T_TMP/$u.img" 4M -t ext2 -b 1024
"$ORLOV_POPULATE" --json "$T_TMP/$u.img" "$src" >"$T_TMP/out" || t_fail "18: UTF-8 name"
valid "$T_TMP/out" "18: UTF-8 name"
grep -q "$u.img" "$T_TMP/out" || t_fail "18: UTF-8 not passed through"
[ "$(jget "$T_TMP/out" image)" = "b'$T_TMP/gr\\xc3\\xbcn.img'" ] ||
	t_fail "18: UTF-8 name read back as $(jget "$T_TMP/out" image)"
t_mkimage "$T_TMP/$b.img" 4M -t ext2 -b 1024
"$ORLOV_POPULATE" --json "$T_TMP/$b.img" "$src" >"$T_TMP/out" || t_fail "18: byte name"
valid "$T_TMP/out" "18: byte name"
[ "$(jget "$T_TMP/out" image)" = "b'$T_TMP/b\\xff%.img'" ] ||
	t_fail "18: byte name read back as $(jget "$T_TMP/out" image)"
echo "18: names: UTF-8 as is, other bytes %XX, read back byte for byte"
}

# ---- 17: a tree that does not fit ------------------------------------------
item17() {
big=$T_TMP/big
mkdir -p "$big"
head -c 3000000 /dev/zero >"$big/f"
t_mkimage "$img" 1M -t ext2 -b 1024
"$ORLOV_POPULATE" --dry-run --json "$img" "$big" >"$T_TMP/out" 2>"$T_TMP/err" &&
	t_fail "17: too big passed"
grep -Eq "Not enough free blocks .* while checking $big: it needs [0-9]+ blocks of 1024 bytes, $img has [0-9]+ free$" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "17: no figures in the message"; }
valid "$T_TMP/out" "17: --dry-run --json, too big"
[ "$(jget "$T_TMP/out" need_blocks)" -gt "$(jget "$T_TMP/out" free_blocks)" ] ||
	t_fail "17: JSON need_blocks/free_blocks"
echo "17: too big: $(cat "$T_TMP/err")"
}

item17b() {

# --dry-run --create: what would be made, and the real run takes as much
rm -f "$T_TMP/new.img"
"$ORLOV_POPULATE" --dry-run --create 8M --block-size 1024 "$T_TMP/new.img" "$src" \
	>"$T_TMP/out" || t_fail "17: --dry-run --create"
[ ! -e "$T_TMP/new.img" ] || t_fail "17: --dry-run --create made IMAGE"
grep -q "^dry run: --create 8M would make $T_TMP/new.img with 8192 blocks of 1024 bytes and [0-9]* inodes$" "$T_TMP/out" ||
	{ cat "$T_TMP/out" >&2; t_fail "17: --dry-run --create summary"; }
mkdir "$T_TMP/tmp"
TMPDIR=$T_TMP/tmp "$ORLOV_POPULATE" --dry-run --json --create auto "$T_TMP/new.img" "$src" \
	>"$T_TMP/dry.json" || t_fail "17: --dry-run --json --create auto"
valid "$T_TMP/dry.json" "17: --dry-run --create auto"
"$ORLOV_POPULATE" -q --create auto "$T_TMP/new.img" "$src" || t_fail "17: --create auto"
blocks=$(dumpe2fs -h "$T_TMP/new.img" 2>/dev/null | awk '/^Block count:/ { print $3 }')
[ "$blocks" = "$(jget "$T_TMP/dry.json" created_blocks)" ] ||
	t_fail "17: --dry-run said $(jget "$T_TMP/dry.json" created_blocks) blocks, --create made $blocks"
[ -z "$(ls "$T_TMP/tmp")" ] || t_fail "17: scratch image left in TMPDIR"
echo "17: --dry-run --create auto: $blocks blocks, as the real run"
}

# ---- 12: --create auto of small trees ---------------------------------------
item12() {
mkdir -p "$T_TMP/empty" "$T_TMP/small"
head -c 60000 /dev/urandom >"$T_TMP/small/f"
for t in empty small; do
	for bs in 1024 4096; do
		"$ORLOV_POPULATE" -q --create auto --block-size $bs "$T_TMP/$t.img" "$T_TMP/$t" 2>"$T_TMP/err" ||
			{ cat "$T_TMP/err" >&2; t_fail "12: --create auto, $t tree, $bs"; }
		[ -s "$T_TMP/err" ] && { cat "$T_TMP/err" >&2; t_fail "12: $t, $bs: messages"; }
		t_fsck "$T_TMP/$t.img"
	done
done
"$ORLOV_POPULATE" -q --create auto --fs-type ext3 "$T_TMP/e3.img" "$T_TMP/empty" 2>"$T_TMP/err" ||
	t_fail "12: --create auto ext3, empty tree"
[ -s "$T_TMP/err" ] && { cat "$T_TMP/err" >&2; t_fail "12: ext3: messages"; }
dumpe2fs -h "$T_TMP/e3.img" 2>/dev/null | grep -q "^Filesystem features:.*has_journal" ||
	t_fail "12: ext3 without a journal"
echo "12: --create auto: an empty directory and 60 KB fit, 1 and 4 KiB blocks, ext3"
}

# ---- 20: the UUID follows the tree, the label, the options -------------------
uuid() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p'
}
item20() {
	mkdir -p "$T_TMP/u1" "$T_TMP/u3"
	printf 'host-a\n' >"$T_TMP/u1/hostname"
	cp -a "$T_TMP/u1" "$T_TMP/u2"
	printf 'host-b\n' >"$T_TMP/u3/hostname"	# same size, other bytes
	touch -d @1600000000 "$T_TMP/u1/hostname" "$T_TMP/u2/hostname" \
		"$T_TMP/u3/hostname"
	for t in u1 u2 u3; do
		"$ORLOV_POPULATE" -q --create 4M "$T_TMP/$t.img" "$T_TMP/$t" ||
			t_fail "20: --create $t"
	done
	"$ORLOV_POPULATE" -q --create 4M --mkfs-options "-L data" "$T_TMP/l.img" "$T_TMP/u1" ||
		t_fail "20: --create -L"
	"$ORLOV_POPULATE" -q --create 4M --mkfs-options "-U $T_UUID" "$T_TMP/x.img" "$T_TMP/u3" ||
		t_fail "20: --create -U"
	[ "$(uuid "$T_TMP/u1.img")" = "$(uuid "$T_TMP/u2.img")" ] ||
		t_fail "20: the same tree, other UUIDs"
	cmp -s "$T_TMP/u1.img" "$T_TMP/u2.img" || t_fail "20: the same tree, other images"
	[ "$(uuid "$T_TMP/u1.img")" != "$(uuid "$T_TMP/u3.img")" ] ||
		t_fail "20: other data, the same UUID $(uuid "$T_TMP/u1.img")"
	[ "$(uuid "$T_TMP/u1.img")" != "$(uuid "$T_TMP/l.img")" ] ||
		t_fail "20: another label, the same UUID"
	[ "$(uuid "$T_TMP/x.img")" = "$T_UUID" ] || t_fail "20: -U did not win"
	echo "20: UUIDs: same tree $(uuid "$T_TMP/u1.img") twice, other data $(uuid "$T_TMP/u3.img"), label $(uuid "$T_TMP/l.img")"
}

# ---- 16: an IMAGE that is no ext2 filesystem: what it is, what to do --------
# notext2 NAME PATTERN FILE: refused with the pattern, the file unchanged
notext2() {
	cp "$3" "$T_TMP/before"
	"$ORLOV_POPULATE" "$3" "$src" 2>"$T_TMP/err" && t_fail "16: $1 accepted"
	grep -q "^orlov-populate: No ext2/ext3 filesystem at the start of the image while checking superblock of $3: $2" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "16: $1: message"; }
	cmp -s "$T_TMP/before" "$3" || t_fail "16: $1: changed"
	echo "16: $1: $(cat "$T_TMP/err")"
}
item16() {
	: >"$T_TMP/empty.img"
	notext2 empty "an empty file, no filesystem (--create SIZE makes one)" "$T_TMP/empty.img"
	t_mkimage "$T_TMP/e.img" 1M -t ext2 -b 1024
	xz -c "$T_TMP/e.img" >"$T_TMP/e.img.xz" 2>/dev/null &&
		notext2 xz "an xz-compressed file: decompress it first" "$T_TMP/e.img.xz"
	# a GPT disk of 3 MiB whose partition 1 (from 1 MiB) holds e.img
	python3 - "$T_TMP/disk.img" <<'PY'
import struct, sys
d = bytearray(3 << 20)
d[446 + 4] = 0xee; d[446 + 8:446 + 12] = struct.pack('<I', 1)
d[510:512] = b'\x55\xaa'
hdr = b'EFI PART' + struct.pack('<IIIIQQQQ16sQII', 0x10000, 92, 0, 0, 1,
	6143, 34, 6110, b'\0' * 16, 2, 128, 128)
d[512:512 + len(hdr)] = hdr
d[1024 + 32:1024 + 48] = struct.pack('<QQ', 2048, 4095)
open(sys.argv[1], 'wb').write(d)
PY
	dd if="$T_TMP/e.img" of="$T_TMP/disk.img" bs=1M seek=1 conv=notrunc status=none
	notext2 gpt "a partitioned disk image (GPT) with an ext2 filesystem in partition 1 at byte 1048576" "$T_TMP/disk.img"
	# a FAT boot sector
	python3 - "$T_TMP/fat.img" <<'PY'
import sys
d = bytearray(1 << 20)
d[0:3] = b'\xeb\x3c\x90'; d[3:11] = b'mkfs.fat'; d[0x15] = 0xf8
d[54:62] = b'FAT16   '; d[510:512] = b'\x55\xaa'
open(sys.argv[1], 'wb').write(d)
PY
	notext2 vfat "a FAT (vfat) filesystem" "$T_TMP/fat.img"
	mke2fs -q -F -E offset=4096 "$T_TMP/off.img" 1M >/dev/null 2>&1
	notext2 offset "an ext2 filesystem at byte 4096, not at the start" "$T_TMP/off.img"
	rm -f "$T_TMP/new.img"
	"$ORLOV_POPULATE" --create 4M --mkfs-options "-E offset=4096" "$T_TMP/new.img" "$src" 2>"$T_TMP/err" &&
		t_fail "16: --create -E offset= accepted"
	grep -q "Invalid usage (--mkfs-options -E offset=: give --offset or --partition)" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "16: -E offset= message"; }
	[ ! -e "$T_TMP/new.img" ] || t_fail "16: -E offset= made IMAGE"
	echo "16: --create -E offset=: refused before mke2fs"
	"$ORLOV_LAYOUT" dump "$T_TMP/disk.img" >/dev/null 2>"$T_TMP/err" &&
		t_fail "16: orlov-layout dump of a disk image passed"
	grep -q "^orlov-layout: No ext2/ext3 filesystem at the start of the image while opening image $T_TMP/disk.img: a partitioned disk image (GPT)" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "16: orlov-layout's message"; }
	echo "16: orlov-layout: $(cat "$T_TMP/err")"
}

# ---- 15: messages that name the cause ----------------------------------------
# msg NAME PATTERN ARGS...: fails with one line matching PATTERN
msg() {
	m_name=$1 m_pat=$2
	shift 2
	"$ORLOV_POPULATE" "$@" >/dev/null 2>"$T_TMP/err" && t_fail "15: $m_name passed"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q "^orlov-populate: $m_pat" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "15: $m_name: message"; }
	echo "15: $m_name: $(cat "$T_TMP/err")"
}
item15() {
	t_mkimage "$img" 8M -t ext2 -b 1024
	debugfs -w -R "mkdir /t" "$img" >/dev/null 2>&1
	# a write the kernel cuts short (here RLIMIT_FSIZE; a full host
	# filesystem alike): not libext2fs's "short write" alone
	mkdir -p "$T_TMP/big3"
	head -c 3000000 /dev/zero | tr '\0' x >"$T_TMP/big3/f"
	(
		trap '' XFSZ
		ulimit -f 2048	# 1 MiB (dash) or 2 MiB (bash): below the data either way
		msg short-write "Short write: no space left on the host filesystem (or over a quota or the file size limit) while writing data of" \
			--in-place "$img" "$T_TMP/big3"
	) || exit 1
	t_fsck "$img"
	if "$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE"; then
		tar -C "$src" -cf "$T_TMP/s.tar" .
		TMPDIR=$T_TMP/nope msg tmpdir "No such file or directory while checking TMPDIR, where the archive is read into: $T_TMP/nope$" \
			"$img" "$T_TMP/s.tar"
	fi
	# delayed data is read again from SOURCE at the writeback: it needs
	# no TMPDIR (a small tree's records stay in memory)
	t_mkimage "$T_TMP/e4.img" 16M -t ext4
	TMPDIR=$T_TMP/nope "$ORLOV_POPULATE" -q --delalloc "$T_TMP/e4.img" "$src" ||
		t_fail "15: --delalloc without a TMPDIR failed"
	t_fsck "$T_TMP/e4.img"
	t_verify "$T_TMP/e4.img" "$src"
	msg no-target "No such directory in the image (make it first, e.g. debugfs -w -R 'mkdir PATH' IMAGE) while looking up target directory /nope$" \
		-t /nope "$img" "$src"
	msg no-target-deep "No such directory in the image .* while looking up target directory /t/a/b$" \
		-t /t/a/b "$img" "$src"
	"$ORLOV_POPULATE" -q -t //t// "$img" "$src" || t_fail "15: -t //t// refused"
	debugfs -R "stat /t/d/f" "$img" 2>/dev/null | grep -q "Type: regular" || t_fail "15: -t //t//: not in /t"
	echo "15: -t //t//: the tree went into /t"
	printf '/d/f d 755 0 0 - - - - -\n' >"$T_TMP/dt"
	t_mkimage "$img" 8M -t ext2 -b 1024
	debugfs -w -R "mkdir /t" "$img" >/dev/null 2>&1
	msg devtable "Device table entry has another type than the source's while applying device table line 1 to /t/d/f in $img$" \
		-t /t --devtable "$T_TMP/dt" "$img" "$src"
	# a name too long for .NAME.orlov-XXXXXX still gets its copy
	long=$T_TMP/$(printf 'n%.0s' $(seq 1 250))
	t_mkimage "$long" 4M -t ext2 -b 1024
	"$ORLOV_POPULATE" -q "$long" "$src" 2>"$T_TMP/err" || t_fail "15: long name"
	[ -s "$T_TMP/err" ] && { cat "$T_TMP/err" >&2; t_fail "15: long name: written in place"; }
	t_fsck "$long"
	echo "15: a 250-byte IMAGE name: committed through a copy, no warning"
}

# ---- 19: progress and seconds of a run from an archive -----------------------
item19() {
	"$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE" || return 0
	mkdir -p "$T_TMP/many/d"
	(cd "$T_TMP/many/d" && seq 1 3000 | xargs touch)
	tar -C "$T_TMP/many" -cf "$T_TMP/many.tar" .
	t_mkimage "$img" 16M -t ext2 -b 1024 -N 4096
	# standard error on a terminal, where the progress line goes
	python3 - "$ORLOV_POPULATE" "$img" "$T_TMP/many.tar" >"$T_TMP/tty" <<'PY' ||
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=s)
os.close(s)
out = b''
while True:
    try:
        b = os.read(m, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
summary = p.stdout.read()
sys.stdout.buffer.write(out.replace(b'\r', b'\n') + b'\n=summary ' + summary)
sys.exit(p.wait())
PY
		{ cat "$T_TMP/tty" >&2; t_fail "19: the run failed"; }
	grep -q "^reading archive $T_TMP/many.tar into " "$T_TMP/tty" ||
		{ cat "$T_TMP/tty" >&2; t_fail "19: nothing said while the archive is read"; }
	# no time left above the whole run's few seconds
	if grep -o 'ETA [0-9]* s' "$T_TMP/tty" | awk '$2 > 30 { bad = 1 } END { exit !bad }'; then
		grep ETA "$T_TMP/tty" >&2; t_fail "19: a wild ETA"
	fi
	# the summary's seconds: the whole run, archive reading included
	t_mkimage "$img" 16M -t ext2 -b 1024 -N 4096
	# (an archive that takes 2 s to arrive)
	{ sleep 2; cat "$T_TMP/many.tar"; } |
		"$ORLOV_POPULATE" --json "$img" - >"$T_TMP/out" || t_fail "19: from stdin"
	secs=$(jget "$T_TMP/out" seconds)
	python3 -c "import sys; sys.exit(float('$secs') < 2)" ||
		t_fail "19: the summary says $secs seconds for a run of more than 2"
	echo "19: a run whose archive took 2 s to arrive: $secs seconds"
	grep "ETA" "$T_TMP/tty" | tail -1
	echo "19: an archive's run says what it reads, and no wild ETA"
}

for i in 18 18b 18c 17 17b 12 20 16 15 19; do
	if item $i; then item$i; fi
done
exit 0
