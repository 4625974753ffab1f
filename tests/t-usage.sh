#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --help (one screen), --help=all, --help=kernel, --version, and the man page
# documenting every option --help=all lists, in the usual order of sections.
. "$(dirname "$0")/lib.sh"

"$ORLOV_POPULATE" --help >"$T_TMP/short" || t_fail "--help exit status"
grep -q "^Usage: orlov-populate \[OPTIONS\] IMAGE SOURCE" "$T_TMP/short" || t_fail "usage line"
# what it is for, first: ext4 among the types, and one screen for a builder
sed -n 2p "$T_TMP/short" | grep -q 'ext2/ext3/ext4' || t_fail "--help's first line: $(sed -n 2p "$T_TMP/short")"
[ "$(wc -l <"$T_TMP/short")" -le 40 ] || t_fail "--help: $(wc -l <"$T_TMP/short") lines, more than a screen's 40"
awk 'length > 80 { exit 1 }' "$T_TMP/short" || t_fail "--help: a line wider than 80 columns"
"$ORLOV_POPULATE" --version | grep -Eq '^orlov-populate [0-9]+\.[0-9]+' || t_fail "--version"
"$ORLOV_POPULATE" --help=all >"$T_TMP/help" || t_fail "--help=all exit status"
"$ORLOV_POPULATE" --help=kernel >"$T_TMP/kernel" || t_fail "--help=kernel exit status"
"$ORLOV_POPULATE" --help=bogus 2>/dev/null; [ $? = 2 ] || t_fail "--help=bogus: not a usage error"
man=$top_srcdir/man/orlov-populate.1
grep -A1 '^\.SH NAME' "$man" | grep -q 'ext2/ext3/ext4' || t_fail "the man page's NAME line"
# the sections in the order man pages keep
[ "$(sed -n 's/^\.SH //p' "$man" | tr '\n' ,)" = "NAME,SYNOPSIS,DESCRIPTION,OPTIONS,EXIT STATUS,ENVIRONMENT,EXAMPLES,SEE ALSO," ] ||
	t_fail "man page sections: $(sed -n 's/^\.SH //p' "$man" | tr '\n' ,)"
# and the other pages the same (orlov-layout has its COMMANDS first)
for m in "$top_srcdir/man/orlov-layout.1" "$top_srcdir/man/orlov-mkfs.8"; do
	sed -n 's/^\.SH //p' "$m" | tr '\n' , | grep -qx \
		'NAME,SYNOPSIS,DESCRIPTION,\(COMMANDS,\)\{0,1\}OPTIONS,EXIT STATUS,ENVIRONMENT,EXAMPLES,SEE ALSO,' ||
		t_fail "$m sections: $(sed -n 's/^\.SH //p' "$m" | tr '\n' ,)"
done
# the short help and the kernel model's are parts of the whole, and the
# kernel model's are the man page's section of their own
for f in short kernel; do
	for o in $(grep -Eo -- '--[a-z][a-z-]+' "$T_TMP/$f" | sort -u); do
		grep -q -- "$o" "$T_TMP/help" || t_fail "$o is in --help${f#short}, not in --help=all"
	done
done
sed -n '/^\.SS The kernel model/,/^\.S[SH] /p' "$man" >"$T_TMP/man.kernel"
kopts=$(grep -Eo -- '^\.B[IR]? \\-\\-[a-z][a-z\\-]+' "$T_TMP/man.kernel" | sed 's/^\.B[IR]\{0,1\} //; s/\\//g' | sort -u)
[ -n "$kopts" ] || t_fail "no kernel model section in the man page"
for o in $kopts; do
	grep -q -- "$o" "$T_TMP/kernel" || t_fail "$o is in the man page's kernel model, not in --help=kernel"
done
for o in $(grep -Eo -- '^      --[a-z][a-z-]+' "$T_TMP/kernel" | tr -d ' '); do
	echo "$kopts" | grep -qx -- "$o" || t_fail "$o is in --help=kernel, not in the man page's kernel model"
done
opts=$(grep -Eo -- '--[a-z][a-z-]+' "$T_TMP/help" | sort -u)
[ -n "$opts" ] || t_fail "no options in --help"
for o in $opts; do
	# groff escapes the dashes: \-\-block\-colour
	pat=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	grep -q -- "$pat" "$man" || t_fail "$o is in --help=all but not in the man page"
done
for o in $(grep -Eo -- '\\-\\-[a-z][a-z\\-]+' "$man" | sed 's/\\//g' | sort -u); do
	grep -q -- "$o" "$T_TMP/help" || t_fail "$o is in the man page but not in --help=all"
done
# -L, -U, -b, -N and -F mean what mke2fs's mean: the image the long
# options make
mkdir -p "$T_TMP/src/d" && echo x >"$T_TMP/src/d/f" || t_fail "a tree"
for form in long short; do
	if [ $form = long ]; then
		set -- --label lab --uuid $T_UUID --block-size 1024 --inodes 128 --force
	else
		set -- -L lab -U $T_UUID -b 1024 -N 128 -F
	fi
	"$ORLOV_POPULATE" -q --create 4M "$@" "$T_TMP/$form.img" "$T_TMP/src" ||
		t_fail "--create with the $form options"
done
cmp -s "$T_TMP/long.img" "$T_TMP/short.img" || t_fail "-L -U -b -N -F: not the image of the long options"
dumpe2fs -h "$T_TMP/short.img" 2>/dev/null | grep -q '^Filesystem volume name: *lab$' ||
	t_fail "-L lab: not the label"
dumpe2fs -h "$T_TMP/short.img" 2>/dev/null | grep -q '^Block size: *1024$' ||
	t_fail "-b 1024: not the block size"
echo "--help=all and the man page list the same $(echo "$opts" | wc -l) options; --help is $(wc -l <"$T_TMP/short") lines"
# -v says on stderr what the options left to the image and to the
# defaults (populate_resolve): the driver and delayed allocation of the
# image's own mount, the kernel release
chosen() {	# WANT OPTIONS... IMAGE
	want=$1
	shift
	"$ORLOV_POPULATE" -v "$@" "$T_TMP/src" >/dev/null 2>"$T_TMP/err" ||
		t_fail "-v $*: $(cat "$T_TMP/err")"
	grep -qxF "orlov-populate: $want" "$T_TMP/err" || t_fail "-v $*: $(cat "$T_TMP/err")"
	echo "-v: $want"
}
t_mkimage "$T_TMP/e2.img" 4M -t ext2 -b 1024
chosen "ext2 driver (the image's mount), without delayed allocation (the ext2 driver has none), Linux 6.1.192 (the default)" \
	"$T_TMP/e2.img"
t_mkimage "$T_TMP/e4.img" 8M -t ext4 -b 1024
chosen "ext4 driver (the image's mount), with delayed allocation (the image's mount), Linux 6.1.192 (the default)" \
	"$T_TMP/e4.img"
t_mkimage "$T_TMP/e4.img" 8M -t ext4 -b 1024
chosen "ext4 driver (the image's mount), without delayed allocation (given), Linux 6.12.118 (given)" \
	--no-delalloc --kernel 6.12 "$T_TMP/e4.img"
t_mkimage "$T_TMP/e2.img" 4M -t ext2 -b 1024
chosen "ext4 driver (given), with delayed allocation (given), Linux 6.1.192-arm64 (given)" \
	--driver ext4 --delalloc --kernel 6.1-arm64 "$T_TMP/e2.img"
t_mkimage "$T_TMP/e2.img" 4M -t ext2 -b 1024
chosen "ext4 driver (given), without delayed allocation (given), Linux 6.12.118-arm64 (given)" \
	--driver ext4 --no-delalloc --kernel 6.12-arm64 "$T_TMP/e2.img"
