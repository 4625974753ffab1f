#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The crosscheck corpus at the root of the images, under the patched kernel
# mounted with topdir_hash: top-level directories must land where the
# tool's default --topdir hash puts them.
export ORLOV_KERNEL_MODE=patched
exec "$(dirname "$0")/crosscheck.sh" --kernel patched --target / --mount-opts topdir_hash "$@"
