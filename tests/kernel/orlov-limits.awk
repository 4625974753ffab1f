# SPDX-License-Identifier: GPL-2.0-or-later
#
# orlov-limits.awk - replay the per-group state of one populate run and say
# which Orlov limit excluded every group the near loop of find_group_orlov
# skipped.  Used by t-corpus-coverage.sh.
#
# Usage: awk -v tag=CFG/CASE -f orlov-limits.awk DUMPE2FS TRACE
#
#   DUMPE2FS  dumpe2fs output of the starting image (before the tool ran):
#             geometry and each group's free blocks, free inodes, directories
#   TRACE     the run's --trace file (doc/trace-format.md)
#
# State replayed from the trace, in order: every ext2_inode_alloc takes an
# inode from `group` (mode=dir: one more used dir and one more debt, capped
# at 255; mode=other: one less debt if any); every ext2_block_alloc takes
# `got` blocks from the group holding `block`, every ext2_block_free gives
# `count` blocks back from `block` on.  Debts start at 0 (in-memory,
# as after a mount).  Block records of an inode that precede its own inode
# record (its inherited ACL block: the record comes at the end of
# ext2_new_inode) are applied after that record's checks.
#
# Before applying an orlov-* (or oldalloc dir) record, the replayed totals
# must give the record's avefreei and avefreeb (totals / ngroups), and for the
# near loop's figures also max_dirs, min_inodes, min_blocks and max_debt, as
# find_group_orlov computes them.  For orlov-near, and orlov-fallback reached
# from the near loop (max_dirs != -1), each group from pgroup onwards (mod
# ngroups) up to the chosen one (fallback: all groups) is classified by the
# first test it fails, in the kernel's order: nofree (no free inode),
# max_debt, max_dirs, min_inodes, min_blocks.  An orlov-near chosen group must
# fail none; a skipped group (or any group before a fallback) must fail one.
#
# Output lines:
#   limit TAG NAME COUNT        per limit (nofree max_debt max_dirs min_inodes min_blocks)
#   records TAG N               orlov/dir records checked
#   mismatch TAG LINE: TEXT     the replay disagrees with the trace (at most 20)
# Exit status 0 even on mismatch; the caller counts the mismatch lines.

function mism(text) {
	nmism++
	if (nmism <= 20)
		print "mismatch", tag, FNR ": " text
}

# The first near-loop test group g fails, "" if it passes all.
function why(g) {
	if (fi[g] == 0) return "nofree"
	if (debt[g] >= rec["max_debt"]) return "max_debt"
	if (ud[g] >= rec["max_dirs"]) return "max_dirs"
	if (fi[g] < rec["min_inodes"]) return "min_inodes"
	if (fb[g] < rec["min_blocks"]) return "min_blocks"
	return ""
}

BEGIN {
	ng = 0; fdb = -1; bpg = 0; ipg = 0; bcount = 0; cur = -1
	nmism = 0; nrec = 0
	split("nofree max_debt max_dirs min_inodes min_blocks", limits, " ")
	for (k in limits) cnt[limits[k]] = 0
}

# ---- the dumpe2fs output of the starting image ----
FNR == NR {
	if ($0 ~ /^First block:/) fdb = $NF + 0
	else if ($0 ~ /^Blocks per group:/) bpg = $NF + 0
	else if ($0 ~ /^Inodes per group:/) ipg = $NF + 0
	else if ($0 ~ /^Block count:/) bcount = $NF + 0
	else if ($0 ~ /^Group [0-9]+:/) {
		cur = substr($2, 1, length($2) - 1) + 0
		if (cur + 1 > ng) ng = cur + 1
	} else if (cur >= 0 && $0 ~ /^ *[0-9]+ free blocks, [0-9]+ free inodes, [0-9]+ directories/) {
		line = $0
		sub(/^ +/, "", line)
		split(line, w, /[ ,]+/)
		fb[cur] = w[1] + 0; fi[cur] = w[4] + 0; ud[cur] = w[7] + 0
		seen[cur] = 1
	}
	next
}

FNR == 1 {
	if (ng == 0 || fdb < 0 || bpg == 0 || ipg == 0 || bcount == 0) {
		print "mismatch", tag, "0: cannot read the geometry from the dumpe2fs output"
		nmism++; bad = 1; exit
	}
	for (g = 0; g < ng; g++) {
		if (!(g in seen)) {
			print "mismatch", tag, "0: no free counts for group " g " in the dumpe2fs output"
			nmism++; bad = 1; exit
		}
		debt[g] = 0
		sumi += fi[g]; sumb += fb[g]; sumd += ud[g]
	}
}

# Block records are held back until the next inode record: those of the
# inode it announces (ext2_new_inode traces at its end, after the inherited
# ACL block) come after its group choice, all others before.
function field(line, key,    n, f, i) {
	n = split(line, f, " ")
	for (i = 2; i <= n; i++)
		if (index(f[i], key "=") == 1) return substr(f[i], length(key) + 2) + 0
	return -1
}

function apply(line,    blk, got, g, b) {
	blk = field(line, "block")
	if (line ~ /^ext2_block_alloc: /) {
		got = field(line, "got")
		g = int((blk - fdb) / bpg)
		if (blk < fdb || g >= ng || got < 0) { mism("bad block record: " line); return }
		fb[g] -= got; sumb -= got
		if (fb[g] < 0) mism("group " g " free blocks below 0")
		return
	}
	got = field(line, "count")
	if (blk < fdb || got < 0) { mism("bad free record: " line); return }
	for (b = blk; b < blk + got; b++) {
		g = int((b - fdb) / bpg)
		if (g >= ng) { mism("bad free record: " line); return }
		fb[g]++; sumb++
	}
}

# apply the held-back records, those of inode @ino (or all: -1) or the others
function flush(ino, mine,    i, k, keep) {
	k = 0
	for (i = 1; i <= npend; i++) {
		if (ino < 0 || (field(pend[i], "ino") == ino) == mine)
			apply(pend[i])
		else
			keep[++k] = pend[i]
	}
	delete pend
	for (i = 1; i <= k; i++) pend[i] = keep[i]
	npend = k
}

/^ext2_block_(alloc|free): / {
	pend[++npend] = $0
	next
}

/^ext2_inode_alloc: / {
	flush(field($0, "ino"), 0)
	inode_record()
	flush(field($0, "ino"), 1)
	next
}

function inode_record(    i, eq, br, g, pg, avi, avb, nd) {
	delete rec
	for (i = 2; i <= NF; i++) {
		eq = index($i, "=")
		if (eq > 1) rec[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
	br = rec["branch"]; g = rec["group"] + 0; pg = rec["pgroup"] + 0
	if (g < 0 || g >= ng) { mism("group out of range: " $0); return }

	if (br ~ /^orlov-/ || br == "dir") {
		nrec++
		avi = int(sumi / ng); avb = int(sumb / ng)
		if (rec["avefreei"] + 0 != avi)
			mism(br " " rec["path"] ": avefreei " rec["avefreei"] " but replay " sumi "/" ng " = " avi)
		if (br != "dir" && rec["avefreeb"] + 0 != avb)
			mism(br " " rec["path"] ": avefreeb " rec["avefreeb"] " but replay " sumb "/" ng " = " avb)
	}
	if ((br == "orlov-near" || br == "orlov-fallback") && rec["max_dirs"] + 0 != -1) {
		# The near loop's own figures, from the replayed totals.
		nd = sumd > 0 ? sumd : 1
		bpd = int((bcount - sumb) / nd)
		md = int(bpg / (bpd > 256 ? bpd : 256))
		if (md * 64 > ipg) md = int(ipg / 64)
		if (md > 255) md = 255
		if (md == 0) md = 1
		if (rec["max_dirs"] + 0 != int(nd / ng) + int(ipg / 16) ||
		    rec["min_inodes"] + 0 != avi - int(ipg / 4) ||
		    rec["min_blocks"] + 0 != avb - int(bpg / 4) ||
		    rec["max_debt"] + 0 != md)
			mism(br " " rec["path"] ": figures max_dirs=" rec["max_dirs"] " min_inodes=" rec["min_inodes"] \
			     " min_blocks=" rec["min_blocks"] " max_debt=" rec["max_debt"] " but replay " \
			     (int(nd / ng) + int(ipg / 16)) " " (avi - int(ipg / 4)) " " (avb - int(bpg / 4)) " " md)
		for (k in rec)
			if (k ~ /^(max_dirs|min_inodes|min_blocks|max_debt)$/) rec[k] += 0
		for (i = 0; i < ng; i++) {
			h = (pg + i) % ng
			r = why(h)
			if (br == "orlov-near" && h == g) {
				if (r != "")
					mism("orlov-near " rec["path"] ": chosen group " g " fails " r " in the replay")
				break
			}
			if (r == "") {
				mism(br " " rec["path"] ": group " h " (before the choice " g ") passes every test in the replay")
				break
			}
			cnt[r]++
		}
	}

	# Take the inode.
	if (fi[g] <= 0) mism("inode from group " g " with no free inode in the replay")
	fi[g]--; sumi--
	if (rec["mode"] == "dir") {
		ud[g]++; sumd++
		if (debt[g] < 255) debt[g]++
	} else if (debt[g] > 0) {
		debt[g]--
	}
	return
}

END {
	flush(-1, 0)
	if (bad) exit 0
	for (k = 1; k <= 5; k++) print "limit", tag, limits[k], cnt[limits[k]]
	print "records", tag, nrec
	if (nmism > 20) print "mismatch", tag, "(" nmism - 20 " more)"
}
