#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Offline images mounted, read back and written to by the PATCHED kernel.
export ORLOV_KERNEL_MODE=patched
exec "$(dirname "$0")/t-guest-verify.sh" "$@"
