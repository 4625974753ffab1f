#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The bash completion (contrib/bash-completion/orlov-populate) in a plain
# bash: the short options that mean mke2fs's, orlov-mkfs's option
# letters and values, the arguments counted past an option's value.
. "$(dirname "$0")/lib.sh"

command -v bash >/dev/null || t_skip "no bash"
comp=$top_srcdir/contrib/bash-completion/orlov-populate
[ -f "$comp" ] || t_fail "no $comp"

# complete FUNCTION WORD...: what FUNCTION offers for the last WORD
complete_words() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		f=$2; shift 2
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		"$f"
		[ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
		complete "$comp" "$@" 2>&1
}
expect() {
	local want=$1 got
	shift
	got=$(complete_words "$@")
	[ "$got" = "$want" ] || t_fail "completing '$*': got '$got', want '$want'"
}

expect "1024 2048 4096 " _orlov_populate orlov-populate -b ""
expect "clear random time " _orlov_populate orlov-populate -U ""
expect "" _orlov_populate orlov-populate -L ""
expect "--create " _orlov_populate orlov-populate --cre
expect "--help --help=all --help=kernel " _orlov_populate orlov-populate --hel
expect "-F " _orlov_populate orlov-populate -F
expect "ext2 ext3 ext4 " _orlov_mkfs orlov-mkfs -t ""
expect "1024 2048 4096 " _orlov_mkfs orlov-mkfs -q -b ""
expect "continue panic remount-ro " _orlov_mkfs orlov-mkfs -e ""
expect "" _orlov_mkfs orlov-mkfs -L ""
expect "-d " _orlov_mkfs orlov-mkfs -d
# files after an option's value: IMAGE in a directory with one entry
mkdir "$T_TMP/d" && : >"$T_TMP/d/only.img"
expect "$T_TMP/d/only.img " _orlov_populate orlov-populate -L lbl "$T_TMP/d/o"
expect "$T_TMP/d/only.img " _orlov_mkfs orlov-mkfs -L lbl "$T_TMP/d/o"
# -T: the usage types of mke2fs.conf when there is one
if [ -r /etc/mke2fs.conf ] && grep -q '^[[:space:]]*small[[:space:]]*=' /etc/mke2fs.conf; then
	expect "small " _orlov_mkfs orlov-mkfs -T sm
fi
# installed under the three names
grep -q 'complete -F _orlov_mkfs orlov-mkfs' "$comp" || t_fail "orlov-mkfs not completed"
grep -q 'ln -s orlov-populate orlov-mkfs' "$top_srcdir/Makefile.am" ||
	t_fail "the orlov-mkfs completion is not installed"
echo "completion: short options, orlov-mkfs's letters and values, files past values"
exit 0
