#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Layers: archives applied in order as OCI image layers (.wh.NAME removes,
# .wh..wh..opq makes a directory opaque, later entries replace earlier
# ones, file <-> directory, hard links, symlinks).  The image equals the
# one of the final tree populated alone, that tree made by a small
# reference extractor (python3 tarfile, whiteouts applied as the OCI
# image spec says); the errors name the layer and the member.
. "$(dirname "$0")/lib.sh"

"$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE" || t_skip "built --without-libarchive"
command -v tar >/dev/null || t_skip "no tar"
command -v python3 >/dev/null || t_skip "no python3"
export SOURCE_DATE_EPOCH=1600000000
umask 022	# the directories the reference extractor makes up
t_clamp=--clamp

L=$T_TMP/l
mkdir -p "$L/1" "$L/2" "$L/3"
# base
(cd "$L/1" && mkdir -p etc usr/bin usr/lib/sub var/cache var/log opt/thing home/u &&
	echo root >etc/passwd && echo hosts1 >etc/hosts && echo old >etc/old.conf &&
	head -c 3000 /dev/zero | tr '\0' t >usr/bin/tool && ln usr/bin/tool usr/bin/tool2 &&
	echo a >usr/lib/a.so && echo b >usr/lib/b.so && echo c >usr/lib/sub/c &&
	echo x >var/cache/x && echo l >var/log/l1 && echo f >opt/thing/f &&
	echo srv >srv && ln -s etc/passwd link && echo p >home/u/.profile) ||
	t_fail "layer 1"
# removals, an opaque directory, file <-> directory, a symlink replaced,
# one name of a hard link removed, a whiteout of nothing
(cd "$L/2" && mkdir -p etc usr/lib usr/bin srv/www &&
	: >etc/.wh.old.conf && echo hosts2 >etc/hosts && chmod 750 etc &&
	: >usr/lib/.wh..wh..opq && echo new >usr/lib/new.so &&
	: >usr/bin/.wh.tool2 && mkdir opt && echo now-a-file >opt/thing &&
	echo index >srv/www/index && : >.wh.home && : >.wh.nonexistent &&
	ln -s etc/hosts link) || t_fail "layer 2"
# a directory back after its whiteout, a whole subtree removed, a file
# replaced by a hard-linked pair, an opaque directory over a lower layer's
(cd "$L/3" && mkdir -p home/v var usr/bin srv opt/more &&
	: >var/.wh.cache && echo tool3 >usr/bin/tool && ln usr/bin/tool usr/bin/tool3 &&
	: >srv/.wh..wh..opq && echo new >srv/new && echo m >opt/more/m) ||
	t_fail "layer 3"
for i in 1 2 3; do
	tar --sort=name --mtime=@1700000000 --owner=0 --group=0 --numeric-owner \
		-C "$L/$i" -cf "$T_TMP/l$i.tar" . || t_fail "tar layer $i"
done

# The reference: each layer's whiteouts applied to the tree below it, then
# its entries extracted over it.
cat >"$T_TMP/ref.py" <<'PY'
import os, shutil, sys, tarfile
ref = sys.argv[1]
os.mkdir(ref)
def rm(p):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.unlink(p)
for layer in sys.argv[2:]:
    t = tarfile.open(layer)
    ms = t.getmembers()
    for m in ms:
        d, b = os.path.split(os.path.normpath(m.name))
        if b == ".wh..wh..opq" and os.path.isdir(os.path.join(ref, d)):
            for k in os.listdir(os.path.join(ref, d)):
                rm(os.path.join(ref, d, k))
        elif b.startswith(".wh."):
            rm(os.path.join(ref, d, b[4:]))
    for m in ms:
        if os.path.basename(os.path.normpath(m.name)).startswith(".wh."):
            continue
        p = os.path.join(ref, os.path.normpath(m.name))
        if os.path.lexists(p) and (m.isdir() != (os.path.isdir(p) and not os.path.islink(p)) or not m.isdir()):
            rm(p)
        t.extract(m, ref, set_attrs=not m.isdir())
        if m.isdir():
            os.chmod(p, m.mode)
PY
python3 "$T_TMP/ref.py" "$T_TMP/ref" "$T_TMP/l1.tar" "$T_TMP/l2.tar" "$T_TMP/l3.tar" ||
	t_fail "reference"
(cd "$T_TMP/ref" && find . | sort) >"$T_TMP/ref.list"
for want in ./etc/hosts ./usr/lib/new.so ./opt/thing ./home/v ./usr/bin/tool3 ./srv/new; do
	grep -qx "$want" "$T_TMP/ref.list" || t_fail "reference lacks $want"
done
for gone in ./etc/old.conf ./usr/lib/a.so ./usr/lib/sub ./usr/bin/tool2 ./home/u ./var/cache ./opt/thing/f ./srv/www; do
	! grep -qx "$gone" "$T_TMP/ref.list" || t_fail "reference has $gone"
done

# layered WHAT REF REF-IMAGE IMAGE LAYER...: on copies of base.img, the
# tree REF copied alone into REF-IMAGE and the LAYERs into IMAGE: e2fsck
# -fn clean, the same layout (IMAGE.dump), verify clean against REF (its
# summary in verify.out), the same image.
layered() {
	local what=$1 ref=$2 rimg=$3 img=$4
	shift 4
	cp "$T_TMP/base.img" "$rimg"
	cp "$T_TMP/base.img" "$img"
	"$ORLOV_POPULATE" -q --all-root "$rimg" "$ref" || t_fail "$what: reference"
	"$ORLOV_POPULATE" -q "$img" "$@" || t_fail "$what: layers"
	t_fsck "$img"
	"$ORLOV_LAYOUT" dump "$rimg" >"$rimg.dump" || t_fail "dump"
	"$ORLOV_LAYOUT" dump "$img" >"$img.dump" || t_fail "dump"
	cmp -s "$rimg.dump" "$img.dump" ||
		{ diff "$rimg.dump" "$img.dump" >&2; t_fail "$what: layout differs from the reference tree's"; }
	t_verify --all-root "$img" "$ref"
	cmp "$rimg" "$img" || t_fail "$what: image differs from the reference tree's"
}

for geo in "-b 1024 -N 256" "-b 4096 -I 256"; do
	t_mkimage "$T_TMP/base.img" 16M -t ext2 $geo
	layered "$geo" "$T_TMP/ref" "$T_TMP/ref.img" "$T_TMP/lay.img" \
		"$T_TMP/l1.tar" "$T_TMP/l2.tar" "$T_TMP/l3.tar"
	echo "$geo: orlov-layout verify of the layered image against the reference tree: $(tail -n 1 "$T_TMP/verify.out")"
	echo "$geo: three layers give the reference tree's image ($(wc -l <"$T_TMP/lay.img.dump") paths)"
done
# Directories as layers, mixed with archives: the same image.
cp "$T_TMP/base.img" "$T_TMP/mix.img"
"$ORLOV_POPULATE" -q --all-root "$T_TMP/mix.img" "$L/1/" "$T_TMP/l2.tar" "$L/3" ||
	t_fail "directories as layers"
cmp "$T_TMP/ref.img" "$T_TMP/mix.img" || t_fail "directory layers: image differs from the reference tree's"
echo "layers 1 and 3 as directories: the same image"
grep -q '^/usr/bin/tool ino=\([0-9]*\) .*' "$T_TMP/lay.img.dump" || t_fail "no tool"
[ "$(grep -c "^/usr/bin/tool3\? ino=$(sed -n 's|^/usr/bin/tool ino=\([0-9]*\) .*|\1|p' "$T_TMP/lay.img.dump") " "$T_TMP/lay.img.dump")" = 2 ] ||
	t_fail "the layer's hard link is not one inode"

# A directory read as a layer gives what the directory walk gives: the
# sample tree (holes, hard links, symlinks), attributes and ACLs.
t_sample_tree "$T_TMP/sample"
if setfattr -n user.color -v blue "$T_TMP/sample/etc/passwd" 2>/dev/null &&
   setfacl -m u:1234:rx "$T_TMP/sample/usr/bin" 2>/dev/null &&
   setfacl -d -m g:99:r "$T_TMP/sample/usr/bin" 2>/dev/null; then
	echo "with a user attribute, an access ACL and a default ACL"
fi
cp "$T_TMP/base.img" "$T_TMP/sd.img"
cp "$T_TMP/base.img" "$T_TMP/sw.img"
"$ORLOV_POPULATE" -q --all-root "$T_TMP/sd.img" "$T_TMP/sample" || t_fail "sample tree"
"$ORLOV_POPULATE" -q --all-root --whiteouts "$T_TMP/sw.img" "$T_TMP/sample" ||
	t_fail "sample tree as a layer"
cmp "$T_TMP/sd.img" "$T_TMP/sw.img" || t_fail "a directory layer differs from the directory walk"
echo "a directory as a layer: the directory walk's image"

# Members in any order: a whiteout spares what its own layer names, before
# or after it; a whiteout of a same-layer name spares it; one name of
# three hard links removed.
python3 - "$T_TMP" <<'PY' || t_fail "python tarfile"
import io, sys, tarfile
def mk(path, members):
    t = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)
    for name, typ, *link in members:
        i = tarfile.TarInfo(name)
        i.type, i.mtime, i.uid, i.gid = typ, 1700000000, 0, 0
        i.mode = 0o755 if typ == tarfile.DIRTYPE else 0o644
        data = b""
        if typ == tarfile.REGTYPE:
            data = name.encode() * 40
        elif link:
            i.linkname = link[0]
        i.size = len(data)
        t.addfile(i, io.BytesIO(data))
    t.close()
R, D, H, S = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.LNKTYPE, tarfile.SYMTYPE
mk(sys.argv[1] + "/o1.tar", [("a", D), ("a/old", R), ("a/d", D), ("a/d/deep", R),
    ("b", D), ("b/old", R), ("h1", R), ("h2", H, "h1"), ("h3", H, "h1"),
    ("s", S, "a/old"), ("e", D), ("e/old", R)])
mk(sys.argv[1] + "/o2.tar", [("a/new", R), ("a/d/mine", R), ("a/.wh..wh..opq", R),
    ("b/y", R), (".wh.b", R), ("c", R), (".wh.c", R), (".wh.h2", R),
    ("s/", D), ("s/in", R), ("b/.wh.y", R), (".wh.e", R)])
mk(sys.argv[1] + "/o3.tar", [("e/n/new", R)])
PY
python3 "$T_TMP/ref.py" "$T_TMP/oref" "$T_TMP/o1.tar" "$T_TMP/o2.tar" "$T_TMP/o3.tar" ||
	t_fail "reference"
(cd "$T_TMP/oref" && find . | sort | tr '\n' ' ') >"$T_TMP/oref.list"
[ "$(cat "$T_TMP/oref.list")" = ". ./a ./a/d ./a/d/mine ./a/new ./b ./b/y ./c ./e ./e/n ./e/n/new ./h1 ./h3 ./s ./s/in " ] ||
	t_fail "reference of the order case: $(cat "$T_TMP/oref.list")"
layered order "$T_TMP/oref" "$T_TMP/oref.img" "$T_TMP/o.img" \
	"$T_TMP/o1.tar" "$T_TMP/o2.tar" "$T_TMP/o3.tar"
echo "members in any order, whiteouts of the same layer's names, a hard link's name removed, a directory back only as a parent: the reference's image"

# One archive: its .wh. names are entries, unless --whiteouts.
cp "$T_TMP/base.img" "$T_TMP/one.img"
"$ORLOV_POPULATE" -q "$T_TMP/one.img" "$T_TMP/l2.tar" || t_fail "one archive"
"$ORLOV_LAYOUT" dump "$T_TMP/one.img" | grep -q '^/etc/\.wh\.old\.conf ' ||
	t_fail "a lone archive's .wh. name was not copied"
cp "$T_TMP/base.img" "$T_TMP/one.img"
"$ORLOV_POPULATE" -q --whiteouts "$T_TMP/one.img" "$T_TMP/l2.tar" || t_fail "--whiteouts"
! "$ORLOV_LAYOUT" dump "$T_TMP/one.img" | grep -q '\.wh\.' || t_fail "--whiteouts copied a whiteout"
t_fsck "$T_TMP/one.img"
echo "one archive: .wh. names copied, and with --whiteouts not"

# Errors: one line naming the layer (and the member), IMAGE untouched.
python3 - "$T_TMP" <<'PY' || t_fail "python tarfile"
import io, sys, tarfile
def mk(path, members):
    t = tarfile.open(path, "w")
    for name, typ in members:
        i = tarfile.TarInfo(name)
        i.type, i.mode, i.mtime = typ, 0o755 if typ == tarfile.DIRTYPE else 0o644, 1600000000
        t.addfile(i)
    t.close()
mk(sys.argv[1] + "/gone.tar", [("./.wh.etc", tarfile.REGTYPE), ("./etc/x", tarfile.REGTYPE)])
mk(sys.argv[1] + "/dotdot.tar", [("./a/../../x", tarfile.REGTYPE)])
mk(sys.argv[1] + "/whdir.tar", [("./.wh.etc", tarfile.DIRTYPE), ("./.wh.etc/x", tarfile.REGTYPE)])
PY
echo garbage >"$T_TMP/garbage.tar"
cp "$T_TMP/base.img" "$T_TMP/err.img"
cp "$T_TMP/base.img" "$T_TMP/err0.img"
err_case() {
	local want=$1
	shift
	"$ORLOV_POPULATE" -q "$T_TMP/err.img" "$@" 2>"$T_TMP/err" && t_fail "accepted: $*"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] || { cat "$T_TMP/err" >&2; t_fail "not one line: $*"; }
	grep -q -- "$want" "$T_TMP/err" || { cat "$T_TMP/err" >&2; t_fail "no '$want': $*"; }
	cmp -s "$T_TMP/err.img" "$T_TMP/err0.img" || t_fail "IMAGE changed: $*"
	echo "refused: $(cat "$T_TMP/err")"
}
err_case "whiteout of the same layer.*layer $T_TMP/gone.tar member ./etc/x" \
	"$T_TMP/l1.tar" "$T_TMP/gone.tar"
err_case "leaves the tree.*layer $T_TMP/dotdot.tar member" "$T_TMP/l1.tar" "$T_TMP/dotdot.tar"
err_case "below a whiteout name.*layer $T_TMP/whdir.tar member ./.wh.etc/x" "$T_TMP/l1.tar" "$T_TMP/whdir.tar"
err_case "layer $T_TMP/garbage.tar" "$T_TMP/l1.tar" "$T_TMP/garbage.tar"
err_case "No such file.*$T_TMP/missing.tar" "$T_TMP/l1.tar" "$T_TMP/missing.tar"
err_case "one layer only" - "$T_TMP/l1.tar" -
exit 0
