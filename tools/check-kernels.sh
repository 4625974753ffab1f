#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-kernels.sh [--line 6.1|6.12]... [--only REGEX] [--case REGEX]
#                  [--mount ext4|ext2]... [--out FILE]
#
# Every point release of Debian 12's 6.1 and 6.12 kernel packages the
# archive still has (apt-cache: linux-image-6.1.0-N-amd64,
# linux-image-6.12.N+deb12-amd64), booted in QEMU as the oracle of the
# crosscheck corpus (tests/kernel/crosscheck.sh --kernel debian, mounted
# -t ext4 with delayed allocation and -t ext2, the ext4 driver either way),
# the tool run with --kernel at that package's upstream release (--only:
# the packages whose name matches; --case: the corpus cases; --mount:
# -t ext4 or -t ext2 alone, default both).  Not part
# of make check (make check-kernels): each kernel costs a download and two
# boots.  Prints, and writes to FILE (default check-kernels.md here), a
# markdown table: package, release, mount, cases, paths, same inode %,
# same blocks %, the cases that differ; exit 1 when a case fails.
# Run from a build directory (make check-kernels), or with top_builddir
# and top_srcdir set.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export top_srcdir=${top_srcdir:-$top}
export top_builddir=${top_builddir:-$PWD}
lines=() mounts=() only='' cases='' out=$PWD/check-kernels.md
while [ $# -gt 0 ]; do
	case $1 in
	--line) lines+=("$2"); shift ;;
	--only) only=$2; shift ;;
	--case) cases=$2; shift ;;
	--mount) mounts+=("$2"); shift ;;
	--out) out=$2; shift ;;
	-h|--help) sed -n '3,20p' "$0"; exit 0 ;;
	*) echo "check-kernels: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ ${#lines[@]} -gt 0 ] || lines=(6.1 6.12)
[ ${#mounts[@]} -gt 0 ] || mounts=(ext4 ext2)
[ -x "$top_builddir/src/orlov-populate" ] ||
	{ echo "check-kernels: no $top_builddir/src/orlov-populate (build first)" >&2; exit 2; }

# packages PATTERN: the archive's linux-image packages of a line, oldest first
packages() {
	apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V
}
# upstream PACKAGE: 6.1.170 from its version 6.1.170-3
upstream() {
	apt-cache show "$1" 2>/dev/null | sed -n 's/^Version: \([0-9][0-9.]*\)[-+~].*/\1/p' |
		sort -V | tail -n1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/check-kernels.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')
narrow=
[ -z "$cases" ] || narrow=" --case $cases"
[ ${#mounts[@]} = 2 ] || narrow="$narrow --mount ${mounts[*]}"
{
	echo "Debian 12's kernel packages in QEMU against orlov-populate, commit $commit, $(date -u +%Y-%m-%d)"
	echo "(tools/check-kernels.sh$narrow; the crosscheck corpus without its heavy cases):"
	echo
	echo "| package | release | mount | cases | paths | same inode % | same blocks % | differing |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$out"
status=0
for line in "${lines[@]}"; do
	case $line in
	6.1) pat='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.12) pat='^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
	*) echo "check-kernels: --line 6.1 or 6.12, not $line" >&2; exit 2 ;;
	esac
	for pkg in $(packages "$pat"); do
		[ -z "$only" ] || [[ $pkg =~ $only ]] || continue
		rel=$(upstream "$pkg")
		[ -n "$rel" ] || { echo "check-kernels: no version for $pkg" >&2; status=1; continue; }
		for fs in "${mounts[@]}"; do
			tap=$work/$pkg-$fs.tap
			echo "== $pkg ($rel), -t $fs" >&2
			ORLOV_DEBIAN_PACKAGE=$pkg ORLOV_TOOL_KERNEL=$rel \
				"$top_srcdir/tests/kernel/crosscheck.sh" --kernel debian \
				--source "$line" --cpus 2 --driver ext4 --fstype "$fs" \
				--no-heavy ${cases:+--only "$cases"} >"$tap" \
				2>"$work/$pkg-$fs.err"
			rc=$?
			[ $rc = 0 ] || [ $rc = 77 ] || status=1
			# `ok N - CASE PATHS/SAME_INODE/SAME_BLOCKS`
			awk -v pkg="$pkg" -v rel="$rel" -v fs="$fs" -v rc="$rc" '
				/^(not )?ok [0-9]+ - / {
					for (k = 1; k <= NF; k++)
						if ($k ~ /^[0-9]+\/[0-9]+\/[0-9]+$/)
							break
					if (k > NF || split($k, f, "/") != 3 || !f[1])
						next
					n++; p += f[1]; i += f[2]; b += f[3]
					if (f[2] != f[1] || f[3] != f[1])
						diff = diff sprintf("%s %.1f/%.1f; ", $(k - 1),
							100 * f[2] / f[1], 100 * f[3] / f[1])
				}
				/^not ok/ { bad++ }
				END {
					if (!n) { printf "| %s | %s | -t %s | - | - | - | - | no result (exit %s) |\n", pkg, rel, fs, rc; exit }
					printf "| %s | %s | -t %s | %d | %d | %.1f | %.1f | %s%s |\n",
						pkg, rel, fs, n, p, 100 * i / p, 100 * b / p,
						bad ? bad " failed; " : "", diff
				}' "$tap" | tee -a "$out"
		done
	done
done
echo "check-kernels: table in $out" >&2
exit $status
