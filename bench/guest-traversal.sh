#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guest-traversal.sh - the cold traversal of bench/layout.py's model,
# checked against a real run: the same fresh images of a subset of the
# Linux 6.1 tree, traversed under the stock 6.1 ext2 driver in the QEMU
# guest (TCG) with a dropped cache; QEMU's trace of the guest's read
# requests (virtio_blk_handle_read) is costed with the same seek model.
#
# usage: guest-traversal.sh --tool PATH --layout PATH --out DIR [--quick] [--keep]
#                           [--fs ext2|ext4]
#
# --fs ext4: the same with ext4 images (mke2fs -t ext4, images/mke2fs.conf),
# no genext2fs, mounted -t ext4 in the guest; the SVG named ext4-*.svg.
#
# Images (one geometry: ext2, 4 KiB blocks, 2 GiB, 65536 inodes, fixed
# UUID and hash seed, SOURCE_DATE_EPOCH): orlov-populate, mke2fs -d,
# genext2fs, and kernel-made (the guest fills an empty image with
# tests/kernel/replay.c's `replay run`, sorted depth first, as
# tests/kernel/crosscheck.sh does).  Tree: Linux 6.1 fs/ (--quick) or
# fs/ kernel/ include/ net/ sound/ mm/ lib/ crypto/ block/ security/
# (AGING_SUBSET overrides).  Per image the whole
# tree in sorted order (the model's order), again in readdir order, and
# (full mode) every top-level directory alone.
# Writes DIR/guest.md, DIR/guest-traversal.svg, DIR/guest.tsv.  Exit 0,
# 77 with a one-line reason on stdout when it cannot run, else failure.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi	# `sh SCRIPT` too
set -u
. "$(dirname "$0")/guest/common.sh"
bg_args "$@"
bg_setup 0
t_all=$(date +%s)

src=$(bg_tree 6.1)
nent=$(find "$src" -mindepth 1 | wc -l)
mib=$(du -sm "$src" | cut -f1)
bg_log "tree: linux 6.1 $subset: $nent entries, $mib MiB"
bg_images "$src" "$work/img"
names=$(bg_tools_present "$work/img")
[ "$BG_FS" != ext2 ] || command -v genext2fs >/dev/null || echo "- genext2fs is not installed: no genext2fs image" >>"$work/notes"

p=$work/payload
mkdir -p "$p"
cp -al "$src" "$p/tree" 2>/dev/null || cp -a "$src" "$p/tree"
"$replay" manifest "$src" >"$p/tree.manifest" || bg_die "replay manifest failed"
pertop=
[ "$quick" = 1 ] || [ "$(echo "$subset" | tr , ' ' | wc -w)" -lt 2 ] || pertop=$(echo "$subset" | tr , ' ')
cat >"$p/plan.sh" <<EOF
NAMES="$names"
FSTYPE=$BG_FS
REPLAY=kernel
PERTOP="$pertop"
READDIR=1
EOF
imgs=()
for t in $names; do imgs+=("$work/img/$t.img"); done
t_guest=$(date +%s)
bg_boot fresh "$p" "$bg_here/traverse-guest.sh" "${imgs[@]}"
t_guest=$(( $(date +%s) - t_guest ))
rm -rf "$p"

mkdir -p "$work/model"
for t in $names; do
	bg_fsck "$work/img/$t.img" "$t"
	bg_model "$work/img/$t.img" "$work/model/$t.json"
done
python3 "$bg_bench/aging.py" cost "$work/trace/fresh.log" "$work/res/fresh/segments" \
	$BG_BLOCKS 4096 >"$work/cost.json" || bg_die "costing the guest's requests failed"
rm -f "$out/guest.tsv"
python3 "$bg_bench/aging.py" row "$out/guest.tsv" 0 "$work/model" "$work/cost.json" ||
	bg_die "aging.py row failed"

{
	[ "$BG_FS" = ext2 ] || { bg_fs_text; echo; }
	echo "Tree: Linux 6.1 \`$(echo "$subset" | sed 's/,/\/ /g')/\` ($nent entries, $mib MiB) from /usr/src/linux-source-6.1.tar.xz; the whole 1.2 GB tree is not used: under TCG on 2 cores its payload alone (the kernel-made image is filled from the guest's initramfs) would take the budget."
	echo
	echo "Images: one geometry for all (ext2, 4 KiB blocks, 256-byte inodes but genext2fs's 128, $((BG_BLOCKS / 256)) MiB = 16 groups, $BG_INODES inodes, fixed UUID and hash seed, SOURCE_DATE_EPOCH): \`orlov-populate IMAGE SRC\`, \`mke2fs -d SRC\`, \`genext2fs -B 4096 -z -d SRC\`, and kernel-made: the stock Debian 6.1 ext2 driver in the guest fills an empty image with \`replay run --colour 0\` (sorted depth first, as tests/kernel/crosscheck.sh; the stock kernel places the top-level directories at random, so that image differs from run to run)."
	echo
	echo "Guest run: stock linux-source-6.1 kernel (kernel/build-kernel.sh --stock), QEMU TCG, one boot. Per image and traversal: mount -o ro, sync, \`echo 3 >/proc/sys/vm/drop_caches\`, then bench/guest/agetool traverse: lstat every entry, readdir every directory, read every file to its end, in sorted depth-first order (the model's order) or in readdir order (what find or tar do). QEMU traces every read request the guest sends (\`-trace enable=virtio_blk_handle_read\`); marker reads on an extra disk delimit each traversal."
	echo
	echo "Columns: *model s* = bench/layout.py's modelled cold traversal of the image (for a top-level directory: its cold traversal alone); *guest requests s* = the guest's actual request sequence (offset, length), in order, costed with the same disk model (seek 1 + 5.17x + 10.83√x ms, 4.17 ms rotation, 150 MB/s, no cost for a request starting right after the previous one; head at block 0); *guest wall s* = the traversal's wall time in the guest: TCG with the image in the host page cache, so CPU time, not disk time (no throttling)."
} >"$work/method.md"
{
	cat "$work/notes" 2>/dev/null
	echo "- guest run: ${t_guest} s (one boot, $names); whole script: $(( $(date +%s) - t_all )) s"
	echo "- the guest's requests include the kernel's readahead, which splits a file's run into a synchronous read and asynchronous readahead: more requests than the model's reads, but the extra ones are sequential, so the seeks agree; the guest has one seek less: the root inode, which the mount keeps in memory"
	echo "- orlov-populate and the kernel-made image differ only where the stock kernel placed a top-level directory (at random) elsewhere than the tool's default (--topdir hash)"
	echo "- the readdir-order rows are costed against the sorted-order model: the model has no readdir order"
	echo "- no throttled device: under TCG a guest wall time is CPU time (the image is in the host page cache), and an IOPS or bandwidth limit would charge every request the same whatever the seek distance; the guest's request sequence costed with the disk model is the check of the model"
} >"$work/notes.md"
python3 - "$work/method.md" "$work/notes.md" "$subset" "$BG_FS" >"$work/meta.json" <<'EOF'
import json, sys
print(json.dumps({'fs': sys.argv[4], 'method': open(sys.argv[1]).read().splitlines(),
                  'notes': open(sys.argv[2]).read().splitlines(),
                  'subset': 'linux 6.1 ' + sys.argv[3]}))
EOF
python3 "$bg_bench/aging.py" report-guest "$out/guest.tsv" "$out" "$work/meta.json" ||
	bg_die "report failed"
cat "$out/guest.md"
bg_log "done in $(( $(date +%s) - t_all )) s"
exit 0
