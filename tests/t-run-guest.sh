#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/kernel/run-guest.sh's watch on the guest's console, with a fake
# qemu-system-x86_64 first in PATH (no QEMU, no kernel: seconds, in the host
# suite): a guest whose console shows a soft lockup and then nothing is
# killed within seconds and retried, not left to its timeout; one that
# shows it on its first boot only passes on the retry, with its disk image
# as it was before the first; a guest that is only slow is not killed; a
# panic that does not reboot, and a QEMU that ignores SIGTERM, are killed
# too.  Then kt_console_fatal (tests/kernel/lib.sh) against the kernel's
# own lines of each kind and lines of a healthy boot that resemble them.
. "$(dirname "$0")/lib.sh"
command -v cpio >/dev/null 2>&1 || t_skip "cpio not found"
rg=$top_srcdir/tests/kernel/run-guest.sh

# The fake QEMU: the serial console is the file of -serial file:PATH, the
# first disk the file of the first -drive file=PATH,...; FAKE_MODE says
# what the guest does, $FAKE_DIR/boots counts the boots.
mkdir -p "$T_TMP/bin" "$T_TMP/payload"
cat >"$T_TMP/bin/qemu-system-x86_64" <<'EOF'
#!/bin/sh
serial= disk=
while [ $# -gt 0 ]; do
	case $1 in
	-serial) serial=${2#file:}; shift ;;
	-drive) [ -n "$disk" ] || { disk=${2#file=}; disk=${disk%%,*}; }; shift ;;
	esac
	shift
done
boots=$(($(cat "$FAKE_DIR/boots" 2>/dev/null || echo 0) + 1))
echo $boots >"$FAKE_DIR/boots"
say() { printf '%s\r\n' "$@" >>"$serial"; }
say '[    0.000000] Linux version 6.1.0-fake' \
	'[    0.214000] rcu: Hierarchical RCU implementation.' \
	'[    0.391000] NMI watchdog: Perf NMI watchdog permanently disabled'
hang() { # the kernel's LINE, then nothing more
	say "$1"
	exec sleep 600
}
result() {
	say "$@" '' 'ORLOV-RESULT rc=0'
	exit 0
}
case $FAKE_MODE in
lockup)
	hang '[   52.123456] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [swapper/0:0]' ;;
lockup-once)
	if [ $boots = 1 ]; then
		printf dirty | dd of="$disk" conv=notrunc status=none
		hang '[   52.123456] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [swapper/0:0]'
	fi
	say '' ORLOV-START
	result "disk: $(head -c 5 "$disk")" ;;
slow)
	say '' ORLOV-START
	sleep 5
	result 'slow but done' ;;
panic)
	hang "[    0.912000] Kernel panic - not syncing: IO-APIC + timer doesn't work!  Boot with apic=debug and send a report." ;;
stubborn)
	trap '' TERM
	hang '[   70.000001] rcu: INFO: rcu_sched self-detected stall on CPU' ;;
esac
exit 1
EOF
chmod 755 "$T_TMP/bin/qemu-system-x86_64"
: >"$T_TMP/bzImage"
: >"$T_TMP/busybox"
printf '#!/bin/sh\n' >"$T_TMP/replay"
chmod 755 "$T_TMP/replay"
echo 'echo guest' >"$T_TMP/guest.sh"

# guest MODE TRIES: run-guest.sh on the fake in $T_TMP/MODE: its rc, its
# wall time in $T_TMP/MODE/secs, stderr and stdout there
guest() {
	d=$T_TMP/$1
	mkdir -p "$d"
	printf clean >"$d/disk.img"
	t0=$(date +%s)
	FAKE_MODE=$1 FAKE_DIR=$d PATH=$T_TMP/bin:$PATH ORLOV_SKIP_KERNEL_TESTS=0 \
		BUSYBOX=$T_TMP/busybox REPLAY=$T_TMP/replay TMPDIR=$d \
		bash "$rg" -k "$T_TMP/bzImage" -p "$T_TMP/payload" -s "$T_TMP/guest.sh" \
		-d "$d/disk.img" -n "$2" -t 45 -b 30 >"$d/out" 2>"$d/err"
	echo $? >"$d/rc"
	echo $(($(date +%s) - t0)) >"$d/secs"
}
# The cases run side by side: most of their time is waiting.
guest lockup 2 &
guest lockup-once 3 &
guest slow 3 &
guest panic 1 &
guest stubborn 1 &
wait

show() { sed 's/^/# /' "$T_TMP/$1/err" >&2; }
check() { # MODE RC BOOTS MAX_SECONDS: the outcome of guest MODE
	d=$T_TMP/$1
	[ "$(cat "$d/rc")" = "$2" ] || { show "$1"; t_fail "$1: exit $(cat "$d/rc"), not $2"; }
	[ "$(cat "$d/boots")" = "$3" ] || { show "$1"; t_fail "$1: $(cat "$d/boots") boots, not $3"; }
	[ "$(cat "$d/secs")" -le "$4" ] || { show "$1"; t_fail "$1: $(cat "$d/secs") s"; }
}
killed() { # MODE TRY WHAT: try TRY of guest MODE killed for WHAT, one line
	grep -q "^run-guest.sh: try $2: killed after [0-9]*s, the console shows: $3.*; console tail:\$" \
		"$T_TMP/$1/err" || { show "$1"; t_fail "$1: try $2 not killed for $3"; }
}
# killed within seconds (the timeout is 45 s) and retried: no result
check lockup 99 2 30
killed lockup 1 'watchdog: BUG: soft lockup - CPU#0 stuck for 26s! \[swapper/0:0\]'
killed lockup 2 'watchdog: BUG: soft lockup'
grep -q '^run-guest.sh: no result after 2 tries$' "$T_TMP/lockup/err" ||
	{ show lockup; t_fail "lockup: no 'no result after 2 tries'"; }
# passes on the retry, which starts from the disk as it was
check lockup-once 0 2 30
killed lockup-once 1 'watchdog: BUG: soft lockup'
grep -q '^run-guest.sh: try 2: guest finished rc=0' "$T_TMP/lockup-once/err" ||
	{ show lockup-once; t_fail "lockup-once: try 2 did not finish"; }
[ "$(cat "$T_TMP/lockup-once/out")" = "disk: clean" ] ||
	t_fail "lockup-once: the retry's output: $(cat "$T_TMP/lockup-once/out")"
# slow is not stalled
check slow 0 1 60
grep -q '^run-guest.sh: try 1: guest finished rc=0' "$T_TMP/slow/err" ||
	{ show slow; t_fail "slow: not finished on its first try"; }
[ "$(cat "$T_TMP/slow/out")" = "slow but done" ] ||
	t_fail "slow: output $(cat "$T_TMP/slow/out")"
check panic 99 1 30
killed panic 1 'Kernel panic - not syncing: IO-APIC'
check stubborn 99 1 30
killed stubborn 1 'rcu: INFO: rcu_sched self-detected stall on CPU'
echo "fake guests: soft lockup killed in $(cat "$T_TMP/lockup/secs") s for 2 tries," \
	"lockup once passed on the retry in $(cat "$T_TMP/lockup-once/secs") s," \
	"slow (5 s) not killed, panic and a QEMU ignoring SIGTERM killed"

# The kernel's lines (Linux 6.1 and 6.12, the timestamp optional): each
# found, from its message on; a healthy boot's lines: none.
n=0
while IFS='|' read -r line want; do
	printf '[    1.000000] Run /init as init process\r\n%s\r\n' "$line" >"$T_TMP/console"
	got=$(bash -c '. "$1" && kt_console_fatal "$2"' _ \
		"$top_srcdir/tests/kernel/lib.sh" "$T_TMP/console") || got=none
	[ "$got" = "$want" ] || t_fail "'$line': got '$got', not '$want'"
	n=$((n + 1))
done <<'EOF'
[   52.123456] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [swapper/0:0]|watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [swapper/0:0]
watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kworker/1:1:31]|watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kworker/1:1:31]
[   12.000000] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1|watchdog: Watchdog detected hard LOCKUP on cpu 1
[   12.000000] watchdog: Watchdog detected hard LOCKUP on cpu 0|watchdog: Watchdog detected hard LOCKUP on cpu 0
[   70.000001] rcu: INFO: rcu_sched self-detected stall on CPU|rcu: INFO: rcu_sched self-detected stall on CPU
[   70.000001] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:|rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[   70.000001] rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: {|rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: {
[  243.000000] INFO: task sync:123 blocked for more than 120 seconds.|INFO: task sync:123 blocked for more than 120 seconds.
[  243.000000] INFO: task kworker/u4:2:57 blocked for more than 241 seconds.|INFO: task kworker/u4:2:57 blocked for more than 241 seconds.
[    0.900000] Kernel panic - not syncing: VFS: Unable to mount root fs|Kernel panic - not syncing: VFS: Unable to mount root fs
[    0.214000] rcu: Hierarchical RCU implementation.|none
[    0.214000] rcu: 	RCU restricting CPUs from NR_CPUS=8192 to nr_cpu_ids=2.|none
[    0.391000] NMI watchdog: Perf NMI watchdog permanently disabled|none
[    0.391000] watchdog: Disabling watchdog on nohz_full cores by default|none
[    2.000000] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.|none
ORLOV-RESULT rc=0|none
EOF
echo "kt_console_fatal: $n console lines read as expected"
