#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --file-contexts: every entry labelled as setfiles labels it.  Each path's
# security.selinux, read back with debugfs, is what matchpathcon gives for
# it and its type; the label goes through the same path as an attribute
# of the source (the image is cmp-identical to one made from a tree that
# carries those labels); <<none>> and no match leave none, even where the
# source had one.
. "$(dirname "$0")/lib.sh"

export SOURCE_DATE_EPOCH=1700000000
fc=$T_TMP/file_contexts
cat >"$fc" <<'EOC'
/.*				system_u:object_r:default_t:s0
/			-d	system_u:object_r:root_t:s0
/etc(/.*)?			system_u:object_r:etc_t:s0
/usr/bin(/.*)?			system_u:object_r:bin_t:s0
/usr/bin/[a-z]+		-l	system_u:object_r:bin_link_t:s0
/usr/lib(/.*)?		-d	system_u:object_r:lib_dir_t:s0
/var/log/l[0-9]+	--	system_u:object_r:var_log_t:s0
/var/log/sparse		<<none>>
/srv/.*			-p	system_u:object_r:fifo_t:s0
/dev(/.*)?			system_u:object_r:device_t:s0
/dev/null		-c	system_u:object_r:null_device_t:s0
/home(/.*)?			system_u:object_r:home_t:s0
/opt/nothing			<<none>>
/sub/etc(/.*)?			system_u:object_r:sub_etc_t:s0
EOC

src=$T_TMP/src
t_sample_tree "$src"
printf 'x' >"$src/opt/nothing"
t_pin_times "$src"
dt=$T_TMP/devtable
printf '/dev d 755 0 0\n/dev/null c 666 0 0 1 3\n' >"$dt"

if "$ORLOV_POPULATE" --help=all | grep -q -- --file-contexts &&
   ! "$ORLOV_POPULATE" --file-contexts "$fc" "$T_TMP/none.img" "$src" 2>&1 |
	grep -q 'no libselinux'; then :; else
	# built without libselinux: refused in one line, and that is all
	"$ORLOV_POPULATE" --file-contexts "$fc" "$T_TMP/none.img" "$src" \
		>/dev/null 2>"$T_TMP/err" && t_fail "--file-contexts without libselinux"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "not one line: $(cat "$T_TMP/err")"
	t_skip "built without libselinux (refused in one line)"
fi
command -v matchpathcon >/dev/null || t_skip "no matchpathcon (selinux-utils)"

# a host label on the source, to be replaced, and one where <<none>> is
have_sec=0
if setfattr -n security.selinux -v host_t "$src/etc/passwd" 2>/dev/null &&
   setfattr -n security.selinux -v host_t "$src/opt/nothing" 2>/dev/null; then
	have_sec=1
fi
setfattr -n user.kept -v yes "$src/etc/empty" 2>/dev/null || :
t_pin_times "$src"

img=$T_TMP/l.img
t_mkimage "$img" 4M -t ext2 -b 1024 -I 128
"$ORLOV_POPULATE" -q --root-attrs --devtable "$dt" --file-contexts "$fc" \
	"$img" "$src" || t_fail "populate --file-contexts"
t_fsck "$img"

# every path, as setfiles would look it up: absolute, with its type
{ (cd "$src" && find . -printf '%y %p\n'); echo "d ./dev"; echo "c ./dev/null"; } |
sort -k2 >"$T_TMP/paths"
n=0
while read -r y p; do
	case $p in .) p=/ ;; *) p=/${p#./} ;; esac
	t_ctype "$y"
	want=$(t_context "$fc" $t_m "$p") || t_fail "matchpathcon $p"
	case $p in /home/a/passwd-link|/usr/lib/deep/er/est/passwd-link2)
		# a hard link: the inode has one label, its first path's
		want=$(t_context "$fc" file /etc/passwd) ;;
	esac
	got=$(t_label "$img" "$p")
	[ "$got" = "$want" ] || t_fail "$p ($t_m): label '$got', matchpathcon '$want'"
	n=$((n + 1))
done <"$T_TMP/paths"
[ "$n" -gt 40 ] || t_fail "only $n paths checked"
echo "$n paths labelled as matchpathcon says"
# stored with its NUL, as the kernel stores a context
debugfs -R "ea_get /etc/passwd security.selinux" "$img" 2>/dev/null |
	grep -q '^security.selinux (27) = "system_u:object_r:etc_t:s0\\000"$' ||
	t_fail "the context is not stored NUL-terminated"
debugfs -R "ea_get /etc/empty user.kept" "$img" 2>/dev/null | grep -q '"yes"' ||
	t_fail "the source's other attributes are lost"

# orlov-layout verify --file-contexts: the expected label of each entry is
# the lookup's, not the source's; a label changed with debugfs is found
"$ORLOV_LAYOUT" verify --clamp --root-attrs --devtable "$dt" \
	--file-contexts "$fc" "$img" "$src" >"$T_TMP/v.out" 2>&1 ||
	{ cat "$T_TMP/v.out" >&2; t_fail "verify --file-contexts"; }
grep -q ' mismatches=0$' "$T_TMP/v.out" || t_fail "$(cat "$T_TMP/v.out")"
cp "$img" "$T_TMP/v.img"
debugfs -w -R "ea_set /usr/bin/twelve security.selinux system_u:object_r:etc_t:s0" \
	"$T_TMP/v.img" >/dev/null 2>&1 || t_fail "debugfs ea_set"
"$ORLOV_LAYOUT" verify --clamp --root-attrs --devtable "$dt" \
	--file-contexts "$fc" "$T_TMP/v.img" "$src" >"$T_TMP/v.out" 2>&1 &&
	t_fail "verify --file-contexts misses a changed label"
grep -q '^mismatch: /usr/bin/twelve: xattr security.selinux' "$T_TMP/v.out" &&
	grep -q ' mismatches=1$' "$T_TMP/v.out" || t_fail "$(cat "$T_TMP/v.out")"
echo "verify --file-contexts passes, and finds a changed label"

# below --target the path looked up is the one in the image
t_mkimage "$T_TMP/t.img" 4M -t ext2 -b 1024
debugfs -w -R "mkdir /sub" "$T_TMP/t.img" >/dev/null 2>&1 || t_fail "mkdir /sub"
mkdir -p "$T_TMP/small/etc" && printf 'x' >"$T_TMP/small/etc/passwd" ||
	t_fail "small tree"
"$ORLOV_POPULATE" -q -t /sub --file-contexts "$fc" "$T_TMP/t.img" \
	"$T_TMP/small" || t_fail "populate -t /sub"
t_fsck "$T_TMP/t.img"
debugfs -R "ea_get /sub/etc/passwd security.selinux" "$T_TMP/t.img" 2>/dev/null |
	grep -q 'sub_etc_t' || t_fail "-t /sub: not labelled by its path in the image"
t_verify --file-contexts "$fc" "$T_TMP/t.img" "$T_TMP/small" /sub

# the same path as an attribute of the source: a tree carrying exactly
# those labels, copied without --file-contexts, gives the same image
if [ $have_sec = 1 ]; then
	cp -a "$src" "$T_TMP/src2" || t_fail "cp -a"
	while read -r y p; do
		p=${p#.}
		p=${p#/}
		f=$T_TMP/src2/$p
		[ -e "$f" ] || [ -L "$f" ] || continue	# the table's
		l=$(t_label "$img" "/$p")
		if [ -n "$l" ]; then
			setfattr -h -n security.selinux \
				-v "0x$(printf '%s' "$l" | od -An -tx1 | tr -d ' \n')00" "$f" ||
				t_fail "setfattr $p"
		else
			setfattr -h -x security.selinux "$f" 2>/dev/null || :
		fi
	done <"$T_TMP/paths"
	t_pin_times "$T_TMP/src2"
	by_contexts() {
		"$ORLOV_POPULATE" -q --root-attrs --file-contexts "$fc" "$1" "$src"
	}
	by_source() { "$ORLOV_POPULATE" -q --root-attrs "$1" "$T_TMP/src2"; }
	t_same_image "labels from --file-contexts and from the source" \
		by_contexts by_source
	echo "the labels land where the same attributes of the source land"
else
	echo "security.* not settable here: the comparison with labelled sources skipped"
fi

# errors: one line each
"$ORLOV_POPULATE" --file-contexts "$T_TMP/missing" "$img" "$src" \
	>/dev/null 2>"$T_TMP/err" && t_fail "a missing contexts file"
[ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q "reading --file-contexts $T_TMP/missing" "$T_TMP/err" ||
	t_fail "missing contexts file: $(cat "$T_TMP/err")"
"$ORLOV_POPULATE" --no-xattrs --file-contexts "$fc" "$img" "$src" \
	>/dev/null 2>"$T_TMP/err" && t_fail "--no-xattrs with --file-contexts"
grep -q 'not with --no-xattrs' "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
exit 0
