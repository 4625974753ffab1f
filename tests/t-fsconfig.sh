#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --fs-config: Android's canned fs_config, as e2fsdroid -C reads it.  Each
# entry's owner, group, permission bits and security.capability (revision
# 2, the mask as permitted, read back byte for byte) come from its line,
# applied after --uid-map, --squash-perms and --devtable (the table wins);
# --root-attrs takes the root's line, --root-owner has the last word on
# it.  The attributes go where the same attributes of a source go (cmp
# with an image made with a device table and a capability on the source);
# orlov-layout verify --fs-config passes, and fails once debugfs changes a
# capability.  Malformed lines and entries without one are one-line errors
# naming the file and line or the path, the image unchanged.
. "$(dirname "$0")/lib.sh"

export SOURCE_DATE_EPOCH=1700000000
src=$T_TMP/src
mkdir -p "$src/system/bin" "$src/system/etc" "$src/data/app" ||
	t_fail "mkdir"
printf '#!/bin/sh\n' >"$src/system/bin/sh"
printf 'ping' >"$src/system/bin/ping"
printf 'conf' >"$src/system/etc/my file"
printf 'f' >"$src/data/f"
printf 'apk' >"$src/data/app/a.apk"
ln -s sh "$src/system/bin/ln"
chmod 0644 "$src/system/bin/sh"
t_pin_times "$src"

fc=$T_TMP/fs_config
# the forms e2fsdroid reads: the root as a line starting with a blank,
# leading '/' or none, a quoted name with a blank, KEY=VALUE fields
# ignored, a later line for a path replacing an earlier one
cat >"$fc" <<'EOF'
# a comment, then a blank line

 0 0 0711
/system 0 0 0751
system/bin 0 2000 0751
system/bin/sh 0 2000 0755 capabilities=0x1000000c0
system/bin/ping 0 2000 0750 capabilities=8192
system/bin/ln 0 2000 0644
system/etc 0 0 0755 selabel=u:object_r:system_file:s0
'system/etc/my file' 0 0 0644
data 1000 1000 0771
data/f 7 7 0600
data/f 1001 1002 0640
data/app 1000 1000 0771
data/app/a.apk 1000 1000 04644
dev 0 0 0755
dev/null 0 0 0666
EOF
dt=$T_TMP/devtable
# the device table's owner and mode for data/f lose to fs_config's
printf '/dev d 700 5 5\n/dev/null c 600 5 5 1 3\n/data/f f 0444 9 9\n' >"$dt"

img=$T_TMP/a.img
t_mkimage "$img" 4M -t ext2 -b 1024 -I 256
"$ORLOV_POPULATE" -q --uid-map 0:5000:2000 --squash-perms --devtable "$dt" \
	--root-attrs --fs-config "$fc" "$img" "$src" ||
	t_fail "populate --fs-config"
t_fsck "$img"

# PATH MODE UID GID, as debugfs stat shows them
stat_of() {
	debugfs -R "stat \"$1\"" "$img" 2>/dev/null | awk '
		/Mode:/ { for (i = 1; i <= NF; i++) if ($i == "Mode:") m = $(i + 1) }
		/^User:/ { u = $2; g = $4 }
		END { print m, u, g }'
}
n=0
while IFS='|' read -r p want; do
	got=$(stat_of "$p")
	[ "$got" = "$want" ] || t_fail "$p: mode uid gid '$got', want '$want'"
	n=$((n + 1))
done <<'EOF'
/|0711 0 0
/system|0751 0 0
/system/bin|0751 0 2000
/system/bin/sh|0755 0 2000
/system/bin/ping|0750 0 2000
/system/bin/ln|0777 0 2000
/system/etc|0755 0 0
/system/etc/my file|0644 0 0
/data|0771 1000 1000
/data/f|0640 1001 1002
/data/app|0771 1000 1000
/data/app/a.apk|04644 1000 1000
/dev|0755 0 0
/dev/null|0666 0 0
EOF
echo "$n entries: owner, group and mode from their fs_config lines"
debugfs -R "stat /dev/null" "$img" 2>/dev/null | grep -q 'Device major/minor number: 01:03' ||
	t_fail "the device table's device numbers are lost"

# security.capability as e2fsdroid writes it: magic 0x02000001, the mask's
# low word as data[0].permitted, its high word as data[1].permitted
caps() {
	debugfs -R "ea_get -x \"$1\" security.capability" "$2" 2>/dev/null |
		sed -n 's/^security\.capability (20) = //p' | tr -d ' '
}
[ "$(caps /system/bin/sh "$img")" = 01000002c0000000000000000100000000000000 ] ||
	t_fail "sh: capability '$(caps /system/bin/sh "$img")'"
[ "$(caps /system/bin/ping "$img")" = 0100000200200000000000000000000000000000 ] ||
	t_fail "ping: capability '$(caps /system/bin/ping "$img")'"
[ -z "$(caps /data/f "$img")" ] || t_fail "data/f: a capability without one"
echo "capabilities stored as VFS_CAP_REVISION_2, effective"

# --root-owner has the last word on the root
t_mkimage "$T_TMP/r.img" 4M -t ext2 -b 1024 -I 256
"$ORLOV_POPULATE" -q --root-attrs --root-owner 3:4 --devtable "$dt" \
	--fs-config "$fc" "$T_TMP/r.img" "$src" || t_fail "populate --root-owner"
img=$T_TMP/r.img
[ "$(stat_of /)" = "0711 3 4" ] || t_fail "--root-owner: root '$(stat_of /)'"

# verify: the same options pass; a capability changed is found
img=$T_TMP/a.img
"$ORLOV_LAYOUT" verify --clamp --uid-map 0:5000:2000 --squash-perms \
	--devtable "$dt" --root-attrs --fs-config "$fc" "$img" "$src" \
	>"$T_TMP/v.out" 2>&1 || { cat "$T_TMP/v.out" >&2; t_fail "verify --fs-config"; }
grep -q '^verified=14 mismatches=0$' "$T_TMP/v.out" || t_fail "$(cat "$T_TMP/v.out")"
"$ORLOV_LAYOUT" verify --clamp --devtable "$dt" --root-attrs "$img" "$src" \
	>"$T_TMP/v.out" 2>&1 && t_fail "verify without --fs-config passes"
cp "$img" "$T_TMP/c.img"
debugfs -w -R "ea_set -f /dev/null /system/bin/ping security.capability" \
	"$T_TMP/c.img" >/dev/null 2>&1 || t_fail "debugfs ea_set"
"$ORLOV_LAYOUT" verify --clamp --uid-map 0:5000:2000 --squash-perms \
	--devtable "$dt" --root-attrs --fs-config "$fc" "$T_TMP/c.img" "$src" \
	>"$T_TMP/v.out" 2>&1 && t_fail "verify misses a changed capability"
grep -q '^mismatch: /system/bin/ping: xattr security.capability' "$T_TMP/v.out" ||
	t_fail "$(cat "$T_TMP/v.out")"
echo "verify --fs-config passes, and finds a changed capability"

# below --target, the path looked up is the one in the image
t_mkimage "$T_TMP/t.img" 4M -t ext2 -b 1024 -I 256
debugfs -w -R "mkdir /system" "$T_TMP/t.img" >/dev/null 2>&1 || t_fail "mkdir"
"$ORLOV_POPULATE" -q -t /system --fs-config "$fc" "$T_TMP/t.img" \
	"$src/system" || t_fail "populate -t /system"
t_fsck "$T_TMP/t.img"
img=$T_TMP/t.img
[ "$(stat_of /system/bin/ping)" = "0750 0 2000" ] ||
	t_fail "-t /system: ping '$(stat_of /system/bin/ping)'"

# the same path as the source's own attributes: a device table giving
# the same owners and modes, the capability on the source, the same image
sh_caps=0x01000002c0000000000000000100000000000000
if setfattr -n security.capability -v $sh_caps "$src/system/bin/sh" 2>/dev/null &&
   setfattr -n security.capability \
	-v 0x0100000200200000000000000000000000000000 "$src/system/bin/ping" &&
   setfattr -n security.capability \
	-v 0x0100000200000000000000000000000000000000 "$src/data/f"; then
	# the table's lines as device table lines (not the root's, the
	# quoted name's, the symlink's nor /dev's, which x.img has not)
	awk '/^[a-z\/]/ && !/bin\/ln |^dev/ {
		p = $1; sub("^/", "", p)
		t = p ~ /\/(sh|ping|f|a\.apk)$/ ? "f" : "d"
		printf "/%s %s %s %s %s\n", p, t, $4, $2, $3 }' "$fc" >"$T_TMP/dt2"
	# the symlink keeps the owner --all-root gives; data/f keeps the
	# source's capability (its line has no mask), as in e2fsdroid
	sed 's,^system/bin/ln 0 2000,system/bin/ln 0 0,' "$fc" >"$T_TMP/fc2"
	chmod 0644 "$src/system/etc/my file"
	t_pin_times "$src"
	by_fsconfig() {
		"$ORLOV_POPULATE" -q --all-root --fs-config "$T_TMP/fc2" "$1" "$src"
	}
	by_devtable() {
		"$ORLOV_POPULATE" -q --all-root --devtable "$T_TMP/dt2" "$1" "$src"
	}
	t_same_image "fs_config and a device table with the source's capabilities" \
		by_fsconfig by_devtable
	echo "the attributes land where the source's own land"
else
	echo "security.capability not settable here: the comparison skipped"
fi

# errors: one line each, the image unchanged
img=$T_TMP/e.img
t_mkimage "$img" 4M -t ext2 -b 1024 -I 256
cp "$img" "$T_TMP/before.img"
one_line() {
	"$ORLOV_POPULATE" "$@" >/dev/null 2>"$T_TMP/err" && t_fail "accepted: $*"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "not one line: $(cat "$T_TMP/err")"
	cmp -s "$img" "$T_TMP/before.img" || t_fail "the image changed: $*"
}
printf 'system 0 0 0755\nsystem/bin 0 x 0755\n' >"$T_TMP/bad"
one_line --fs-config "$T_TMP/bad" "$img" "$src"
grep -q "Malformed fs_config line.*while reading fs_config $T_TMP/bad line 2$" "$T_TMP/err" ||
	t_fail "$(cat "$T_TMP/err")"
for bad in 'a 0 0' 'a 0 0 0755 junk' 'a 0 0 0755 capabilities=0xZ' 'a 0 0 0855' \
	   'a 0 0 017777' "'a 0 0 0755" 'a -1 0 0755' 'a 0 4294967296 0755'; do
	printf '%s\n' "$bad" >"$T_TMP/bad"
	one_line --fs-config "$T_TMP/bad" "$img" "$src"
	grep -q "line 1$" "$T_TMP/err" || t_fail "'$bad': $(cat "$T_TMP/err")"
done
grep -v '^data/app/a.apk' "$fc" >"$T_TMP/short"
one_line --devtable "$dt" --fs-config "$T_TMP/short" "$img" "$src"
grep -q 'No fs_config line for this path.*data/app/a.apk$' "$T_TMP/err" ||
	t_fail "$(cat "$T_TMP/err")"
one_line --fs-config "$T_TMP/missing" "$img" "$src"
grep -q "while reading fs_config $T_TMP/missing$" "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
one_line --no-xattrs --devtable "$dt" --fs-config "$fc" "$img" "$src"
grep -q 'not with --no-xattrs' "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
echo "malformed lines, a missing line and --no-xattrs refused in one line"
exit 0
