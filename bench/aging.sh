#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# aging.sh - aging in the QEMU guest: the image each tool made of a subset
# of the Linux tree goes through N rounds of realistic change under the
# stock 6.1 ext2 driver; after each round the modelled cold traversal
# (bench/layout.py, from the image) and the guest's real request sequence
# of a cold traversal (costed with the same model) are measured.
#
# usage: aging.sh --tool PATH --layout PATH --out DIR [--quick] [--keep]
#                 [--fs ext2|ext4]
#
# --fs ext4: the same with ext4 images (mke2fs -t ext4, images/mke2fs.conf),
# no genext2fs, mounted -t ext4 in the guest; SVGs named ext4-*.svg.
#
# Starting images (bench/guest-traversal.sh has the details): orlov-populate,
# mke2fs -d, genext2fs, kernel-made, all of Linux 6.1's fs/ (--quick) or
# fs/ kernel/ include/ net/ sound/ mm/ lib/ crypto/ block/ security/
# (AGING_SUBSET), 2 GiB ext2, 4 KiB blocks.
# Rounds (AGING_ROUNDS; --quick 2, full 4): the whole difference between
# linux-source-6.1 and linux-source-6.12 of the subset, forward in odd
# rounds (the tree becomes 6.12), backward in even rounds (back to 6.1),
# like switching a checkout between two releases: files removed, created,
# rewritten in place (open O_TRUNC, same inode, new blocks), directories
# made and removed (bench/aging.py changes).  One guest boot per round
# applies it to every image in turn (bench/guest/aging-guest.sh) with the
# same process colour, then measures each.
# Writes DIR/aging.md, DIR/aging.svg, DIR/aging-ratio.svg, DIR/aging.tsv.
# Exit 0; 77 with a one-line reason on stdout when it cannot run; else
# failure.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi	# `sh SCRIPT` too
set -u
. "$(dirname "$0")/guest/common.sh"
bg_args "$@"
bg_setup 1
t_all=$(date +%s)

old=$(bg_tree 6.1)
new=$(bg_tree 6.12)
nent=$(find "$old" -mindepth 1 | wc -l)
mib=$(du -sm "$old" | cut -f1)
nent2=$(find "$new" -mindepth 1 | wc -l)
mib2=$(du -sm "$new" | cut -f1)
bg_log "tree: linux 6.1 $subset: $nent entries, $mib MiB; 6.12: $nent2 entries, $mib2 MiB; $rounds rounds"
python3 "$bg_bench/aging.py" changes "$old" "$new" "$work/fwd" >"$work/fwd.summary" ||
	bg_die "change list 6.1 -> 6.12 failed"
python3 "$bg_bench/aging.py" changes "$new" "$old" "$work/back" >"$work/back.summary" ||
	bg_die "change list 6.12 -> 6.1 failed"
bg_images "$old" "$work/img"
names=$(bg_tools_present "$work/img")
[ "$BG_FS" != ext2 ] || command -v genext2fs >/dev/null || echo "- genext2fs is not installed: no genext2fs image" >>"$work/notes"
imgs=()
for t in $names; do imgs+=("$work/img/$t.img"); done
rm -f "$out/aging.tsv"
mkdir -p "$work/model"

# after_round R: fsck, model and the guest's costed requests into the rows
after_round() {
	local r=$1 t
	for t in $names; do
		bg_fsck "$work/img/$t.img" "$t.round$r"
		bg_model "$work/img/$t.img" "$work/model/$t.json"
		cp "$work/model/$t.json" "$work/logs/model.$t.round$r.json"
	done
	python3 "$bg_bench/aging.py" cost "$work/trace/round$r.log" "$work/res/round$r/segments" \
		$BG_BLOCKS 4096 >"$work/cost.json" || bg_die "costing round $r failed"
	python3 "$bg_bench/aging.py" row "$out/aging.tsv" "$r" "$work/model" "$work/cost.json" ||
		bg_die "aging.py row failed"
}

# round 0: the kernel fills its image, then every image is measured
p=$work/payload
rm -rf "$p"; mkdir -p "$p"
cp -al "$old" "$p/tree" 2>/dev/null || cp -a "$old" "$p/tree"
"$replay" manifest "$old" >"$p/tree.manifest" || bg_die "replay manifest failed"
cat >"$p/plan.sh" <<EOF
NAMES="$names"
FSTYPE=$BG_FS
REPLAY=kernel
PERTOP=
READDIR=0
EOF
t0=$(date +%s)
bg_boot round0 "$p" "$bg_here/traverse-guest.sh" "${imgs[@]}"
after_round 0
guest_times="round 0: $(( $(date +%s) - t0 )) s"

for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then d=$work/fwd; else d=$work/back; fi
	rm -rf "$p"; mkdir -p "$p"
	cp "$d/changes.list" "$p/changes.list"
	cp -al "$d/data" "$p/data" 2>/dev/null || cp -a "$d/data" "$p/data"
	cat >"$p/plan.sh" <<EOF
NAMES="$names"
FSTYPE=$BG_FS
ROUND=$r
EOF
	t0=$(date +%s)
	bg_boot "round$r" "$p" "$bg_here/aging-guest.sh" "${imgs[@]}"
	after_round "$r"
	guest_times="$guest_times, $r: $(( $(date +%s) - t0 )) s"
done
rm -rf "$p"

summ() { # SUMMARY-FILE: one line of the change counts
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); print("%d files removed, %d created, %d rewritten, %d unchanged, %d directories made, %d removed, %d symlinks made; %.0f MiB written" % (d["unlink"], d["create"], d["rewrite"], d["unchanged_files"], d["mkdir"], d["rmdir"], d["symlink"], d["bytes_written"] / 1048576))' "$1"
}
{
	[ "$BG_FS" = ext2 ] || { bg_fs_text; echo; }
	echo "Tree: Linux \`$(echo "$subset" | sed 's/,/\/ /g')/\`: 6.1 has $nent entries ($mib MiB), 6.12 $nent2 ($mib2 MiB), from Debian's linux-source-6.1 and linux-source-6.12. The whole 1.2 GB tree is not used: under TCG on 2 cores its initramfs payload and four images per round would not fit the budget."
	echo
	echo "Starting images (round 0): orlov-populate, \`mke2fs -d\`, genext2fs, and kernel-made (the stock 6.1 ext2 driver fills an empty image in the guest with \`replay run --colour 0\`, sorted depth first; its top-level directories go to random groups, so it differs between runs). One geometry: ext2, 4 KiB blocks, $((BG_BLOCKS / 256)) MiB (16 groups), $BG_INODES inodes, fixed UUID and hash seed."
	echo
	echo "Rounds: $rounds. Odd rounds apply the whole 6.1 → 6.12 difference of the subset ($(summ "$work/fwd/summary.json")), even rounds the way back ($(summ "$work/back/summary.json")), like switching a checkout between the two releases. Order within a round: unlink, rmdir, mkdir, then files written in sorted depth-first order, rewritten files in place (O_TRUNC: same inode, blocks freed and allocated again). Applied by the stock Debian 6.1 ext2 driver in a QEMU (TCG) guest, one boot per round, every image in turn, from a process with the same pid colour (pid % 16 = 0)."
	echo
	echo "Measured after each round: *model s* = bench/layout.py's modelled cold traversal of the image (sorted depth first: inode, directory blocks, file blocks; seek 1 + 5.17x + 10.83√x ms, 4.17 ms rotation, 150 MB/s); *guest requests s* = the read requests the guest's kernel actually sent during a cold traversal in the same sorted order (mount -o ro, drop_caches, bench/guest/agetool traverse: lstat, readdir, read every byte), captured by QEMU's virtio_blk_handle_read trace and costed in order with the same disk model; *guest wall s* = the traversal's wall time under TCG (CPU-bound, image in the host page cache: not a disk time)."
} >"$work/method.md"
{
	cat "$work/notes" 2>/dev/null
	echo "- guest boots: $guest_times; whole script: $(( $(date +%s) - t_all )) s"
	echo "- the guest's requests include the kernel's readahead, which splits a file's run into a synchronous read and asynchronous readahead: more requests than the model's reads, but the extra ones are sequential, so the seeks agree; the guest has one seek less everywhere: the root inode, which the mount keeps in memory"
	echo "- orlov-populate and the kernel-made image differ only where the stock kernel placed a top-level directory (at random) elsewhere than the tool's default (--topdir hash): the two start from the same allocator below the top level, and every round applies the same operations with the same kernel, so a gap between them (orlov-populate 'losing' to the kernel-made image) comes from that top-level placement and what later rounds build on it"
	echo "- no throttled device: under TCG a guest wall time is CPU time (the image is in the host page cache), and an IOPS or bandwidth limit would charge every request the same whatever the seek distance; the guest's request sequence costed with the disk model is the check of the model"
} >"$work/notes.md"
python3 - "$work/method.md" "$work/notes.md" "$subset" "$rounds" "$BG_FS" >"$work/meta.json" <<'EOF'
import json, sys
n = int(sys.argv[4])
print(json.dumps({'fs': sys.argv[5], 'method': open(sys.argv[1]).read().splitlines(),
                  'notes': open(sys.argv[2]).read().splitlines(),
                  'subset': 'linux ' + sys.argv[3],
                  'versions': {str(r): '6.1' if r % 2 == 0 else '6.12' for r in range(n + 1)}}))
EOF
python3 "$bg_bench/aging.py" report-aging "$out/aging.tsv" "$out" "$work/meta.json" ||
	bg_die "report failed"
cat "$out/aging.md"
bg_log "done in $(( $(date +%s) - t_all )) s"
exit 0
