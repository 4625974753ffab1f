#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# boot.sh - build (or reuse) the harness kernel and boot it in QEMU (TCG).
#
# Usage:
#   kernel/boot.sh [--stock | --patched] [--source V] [--shell]
#                  [run-guest.sh options...]
#
#   --stock/--patched/--source   passed to kernel/build-kernel.sh
#   --shell   interactive busybox shell on this terminal (Ctrl-A X quits);
#             -d IMAGE / -p PAYLOAD_DIR / -a CMDLINE are honoured
#   anything else is passed to tests/kernel/run-guest.sh, e.g.
#     kernel/boot.sh --patched -p payload -s guest.sh -d a.img -o out.txt
#   (-k is supplied; -p defaults to an empty payload directory).
#
# Exit status: that of run-guest.sh (the guest script's exit status).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kargs=() rargs=() shell=false payload=
while [ $# -gt 0 ]; do
	case $1 in
	--stock|--patched) kargs+=("$1") ;;
	--source) kargs+=("$1" "$2"); shift ;;
	--shell) shell=true ;;
	-p) payload=$2; shift ;;
	-h|--help) sed -n '3,17p' "$0"; exit 0 ;;
	*) rargs+=("$1") ;;
	esac
	shift
done
kernel=$("$here/build-kernel.sh" "${kargs[@]}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/orlov-boot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -z "$payload" ]; then
	payload=$tmp/payload
	mkdir -p "$payload"
fi
if $shell; then
	printf 'echo "orlov guest shell; poweroff with: exit"\nsetsid cttyhack sh\n' >"$tmp/shell.sh"
	"$here/../tests/kernel/run-guest.sh" -i -k "$kernel" -p "$payload" \
		-s "$tmp/shell.sh" "${rargs[@]}"
else
	"$here/../tests/kernel/run-guest.sh" -k "$kernel" -p "$payload" "${rargs[@]}"
fi
