#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The crosscheck corpus with the oldalloc policy (guest mounts -o oldalloc).
exec "$(dirname "$0")/crosscheck.sh" --policy oldalloc "$@"
