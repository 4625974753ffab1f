#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# run-guest.sh - boot the harness kernel in QEMU (TCG) with a busybox
# initramfs and run one shell script in the guest.
#
# Usage:
#   tests/kernel/run-guest.sh -k BZIMAGE -p PAYLOAD_DIR [-P NAME]... -s GUEST_SCRIPT
#       [-d IMAGE]... [-o OUTFILE] [-t TIMEOUT_S] [-b BOOT_TIMEOUT_S]
#       [-m MEM_MB] [-x EXTRA_MB] [-a EXTRA_CMDLINE] [-l CONSOLE_LOG] [-n TRIES]
#       [-r RESULT_DIR [-R RESULT_MB]] [-c CPUS] [-M MODULES_DIR] [-A ARCH] [-i]
#
#   -k  kernel (kernel/build-kernel.sh prints one)
#   -p  directory copied to /payload in the guest (may be large)
#   -P  only these entries of PAYLOAD_DIR (names, one per -P): a boot that
#       needs part of a shared payload packs and unpacks only that part
#   -s  script run in the guest as `sh /guest.sh` with cwd /, PATH set,
#       /proc /sys /dev mounted, tracefs at /sys/kernel/tracing if the kernel
#       has it; /bin/replay is the static replay tool; /mnt and /tmp exist.
#       The script should umount what it mounts (init also umounts leftovers
#       and syncs before powering off).
#   -d  raw disk image, virtio: first -d is /dev/vda, next /dev/vdb, ...
#   -o  the guest's console output between its start and result markers
#       (default: stdout)
#   -t  whole-run timeout in seconds (default 600)
#   -b  seconds allowed to reach the guest script (default 120)
#   -m  guest memory in MiB (default: 1024, more for a big payload)
#   -x  MiB added to the default guest memory (not with -m): what the
#       guest script needs beyond the payload, e.g. the buddy cache of a
#       disk with many groups
#   -a  extra kernel command line arguments
#   -l  keep the full serial console log of the last try here
#   -n  tries (default 3): a boot that stalls or times out is killed and
#       retried with every IMAGE restored to its content before the first try
#       (saved in the run's temporary directory, or for an image on a
#       tmpfs beside it on that tmpfs);
#       so is, at once, a guest whose console shows a soft or hard lockup,
#       an RCU stall, a hung task or a panic (kt_console_fatal in lib.sh)
#   -r  bulk results channel: the guest script writes files under /results
#       (in RAM); init tars /results onto an extra virtio disk (attached
#       after the -d images, its name is in $ORLOV_RESULT_DEV) and the host
#       unpacks it into RESULT_DIR.  Much faster than the serial console.
#   -R  size of that disk in MiB (default 512)
#   -c  virtual CPUs (qemu -smp; default 1; needs an SMP kernel to be
#       used: a kernel/build-kernel.sh --smp build, or Debian's)
#   -M  kernel modules for a modular kernel (kernel/debian-kernel.sh prints
#       such a directory): MODULES_DIR/load-order names files in
#       MODULES_DIR/modules/, which init insmods in that order before the
#       guest script, then waits (at most 30 s) for every /dev/vd* disk;
#       a module that does not load fails the run (rc 97).  The default
#       guest memory is 256 MiB larger, and the command line gets
#       rootfstype=ramfs (such a kernel has CONFIG_TMPFS and would unpack
#       the initramfs into a tmpfs capped at half the memory).
#   -A  the guest's architecture (default $ORLOV_ARCH, else amd64): amd64
#       boots qemu-system-x86_64 (console ttyS0); arm64 boots
#       qemu-system-aarch64 -M virt -cpu cortex-a57 (console ttyAMA0, the
#       PL011; no pointer authentication to emulate, which makes -cpu max
#       slower under TCG) with an arm64 kernel Image (kernel/debian-kernel.sh
#       --arch arm64), busybox-static:arm64 and the replayer cross-built
#       (lib.sh: kt_busybox, kt_guest_replay)
#   -i  interactive: serial console on this terminal (Ctrl-A X quits),
#       no timeout, no retry, no output capture (see kernel/boot.sh --shell)
#
# The guest script can read $ORLOV_NDISKS (number of -d images).
#
# Exit status: the guest script's exit status; 77 if QEMU is missing;
# 99 if no try produced a result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel= payload= pick=() script= outfile= timeout=600 boot_timeout=120 mem= extra=
conslog= tries=3 resdir= resmb=512 interactive=false cpus=1 xmem=0
origs=()
images=()
moddir=
while getopts 'k:p:P:s:d:o:t:b:m:a:l:n:r:R:c:M:x:A:ih' opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	p) payload=$OPTARG ;;
	P) pick+=("$OPTARG") ;;
	s) script=$OPTARG ;;
	d) images+=("$OPTARG") ;;
	o) outfile=$OPTARG ;;
	t) timeout=$OPTARG ;;
	b) boot_timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	a) extra=$OPTARG ;;
	l) conslog=$OPTARG ;;
	n) tries=$OPTARG ;;
	r) resdir=$OPTARG ;;
	R) resmb=$OPTARG ;;
	c) cpus=$OPTARG ;;
	i) interactive=true ;;
	M) moddir=$OPTARG ;;
	x) xmem=$OPTARG ;;
	A) kt_set_arch "$OPTARG" ;;
	h) sed -n '3,67p' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
[ -n "$kernel" ] && [ -n "$payload" ] && [ -n "$script" ] ||
	{ echo "usage: run-guest.sh -k BZIMAGE -p PAYLOAD_DIR -s GUEST_SCRIPT [-d IMAGE]... [-o OUT] [-t S]" >&2; exit 2; }
[ -f "$kernel" ] || kt_die "no kernel $kernel"
[ -d "$payload" ] || kt_die "no payload dir $payload"
[ -f "$script" ] || kt_die "no guest script $script"
[ ${#images[@]} -le 24 ] || kt_die "at most 24 disks"
for i in "${images[@]}"; do [ -f "$i" ] || kt_die "no image $i"; done
[[ $cpus =~ ^[1-8]$ ]] || kt_die "-c takes 1 to 8 CPUs"
[[ $xmem =~ ^[0-9]+$ ]] || kt_die "-x takes MiB"
if [ -n "$moddir" ]; then
	[ -f "$moddir/load-order" ] && [ -d "$moddir/modules" ] ||
		kt_die "-M $moddir: no load-order and modules/ there"
	while IFS= read -r m; do
		[[ $m =~ ^[A-Za-z0-9_-]+\.ko$ ]] || kt_die "-M: bad module name '$m' in load-order"
		[ -f "$moddir/modules/$m" ] || kt_die "-M: no $moddir/modules/$m"
	done <"$moddir/load-order"
fi

kt_require_qemu
kt_need cpio cpio || true
command -v cpio >/dev/null || kt_die "cpio missing"

# static busybox and replayer of the guest's architecture
busybox=${BUSYBOX:-}
[ -n "$busybox" ] || busybox=$(kt_busybox) || exit 1
replay=$(kt_guest_replay) || exit 1

work=$(kt_tmpdir)
qpid=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null || true
	rm -rf "$work"
	[ ${#origs[@]} = 0 ] || rm -f "${origs[@]}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- initramfs --------------------------------------------------------------
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,mnt,tmp,etc,run,results}
cp "$busybox" "$root/bin/busybox"
cp "$replay" "$root/bin/replay"
cp "$script" "$root/guest.sh"
[ "$(id -u)" = 0 ] && mknod -m 600 "$root/dev/console" c 5 1
if [ -n "$moddir" ]; then
	mkdir -p "$root/lib/modules"
	while IFS= read -r m; do
		cp "$moddir/modules/$m" "$root/lib/modules/$m"
	done <"$moddir/load-order"
	cp "$moddir/load-order" "$root/lib/modules/load-order"
fi
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
# orlov-populate test guest init (generated by tests/kernel/run-guest.sh)
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/ TZ=UTC LC_ALL=C
. /env.sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
if [ -d /sys/kernel/tracing ]; then
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
fi
# run-guest.sh -M: load the modules, then wait for the disks they bring
modfail=
if [ -f /lib/modules/load-order ]; then
	for m in $(cat /lib/modules/load-order); do
		insmod "/lib/modules/$m" || { modfail="insmod $m failed"; break; }
	done
	n=0
	while [ -z "$modfail" ]; do
		missing=
		for d in $ORLOV_DEVS; do [ -b "$d" ] || missing="$missing $d"; done
		[ -n "$missing" ] || break
		n=$((n + 1))
		[ $n -le 150 ] || modfail="no$missing after 30 s"
		sleep 0.2
	done
fi
echo
echo ORLOV-START
cd /
if [ -z "$modfail" ]; then
	sh /guest.sh
	rc=$?
else
	echo "init: modules: $modfail"
	rc=97
fi
cd /
for m in $(awk '$1 ~ /^\/dev\/vd/ {print $2}' /proc/mounts | sort -r); do
	umount "$m" || echo "init: umount $m failed"
done
if [ -n "$ORLOV_RESULT_DEV" ] && [ -z "$modfail" ]; then
	tar -cf "$ORLOV_RESULT_DEV" -C /results . || { echo "init: results tar failed"; rc=98; }
fi
sync
echo
echo "ORLOV-RESULT rc=$rc"
reboot -f
EOF
chmod 755 "$root/init"
letters=abcdefghijklmnopqrstuvwxyz
{
	echo "export ORLOV_NDISKS=${#images[@]}"
	if [ -n "$resdir" ]; then
		echo "export ORLOV_RESULT_DEV=/dev/vd${letters:${#images[@]}:1}"
	else
		echo "export ORLOV_RESULT_DEV="
	fi
	# every disk, the results disk too (init waits for them after -M)
	ndev=${#images[@]}
	[ -z "$resdir" ] || ndev=$((ndev + 1))
	printf "ORLOV_DEVS='"
	for j in $(seq 0 $((ndev - 1))); do printf '/dev/vd%s ' "${letters:$j:1}"; done
	echo "'"
} >"$root/env.sh"
# payload: a real copy.  (Not `cp -al`: every file would then have
# nlink=2, which makes both cpio and the kernel's initramfs unpacker
# (hard-link lookup in a 32-bucket hash) quadratic in the number of files.)
if [ ${#pick[@]} = 0 ]; then
	cp -a "$payload" "$root/payload" || kt_die "cannot copy the payload"
else
	mkdir "$root/payload"
	for e in "${pick[@]}"; do
		[[ $e != */* && $e != . && $e != .. ]] || kt_die "-P $e: a name in PAYLOAD_DIR"
		cp -a "$payload/$e" "$root/payload/" || kt_die "cannot copy $payload/$e"
	done
fi
initrd=$work/initrd.cpio
nentries=$(cd "$root" && find . -print0 | LC_ALL=C sort -z | tee "$work/list" | tr -cd '\0' | wc -c)
(cd "$root" && cpio --null -o -H newc --quiet <"$work/list" >"$initrd") ||
	kt_die "cpio failed"
rm -rf "$root" "$work/list"

isz=$(( $(stat -c %s "$initrd") / 1048576 ))
if [ -z "$mem" ]; then
	# rootfs is ramfs: every file costs at least a page plus its inode and
	# dentry; the initrd itself stays in memory until unpacked
	mem=$(( 1024 + 2 * isz + nentries * 8 / 1024 ))
	# a distribution kernel: a bigger image, its modules, 8192 possible
	# CPUs' worth of per-CPU tables
	[ -z "$moddir" ] || mem=$((mem + 256))
	mem=$((mem + xmem))
fi
# unpacking the initramfs under TCG takes a while for big payloads
boot_timeout=$(( boot_timeout + nentries / 200 + isz / 10 ))
kt_log "initramfs: $nentries entries, ${isz} MiB; guest memory ${mem} MiB"

# ---- images: keep pristine copies for retries --------------------------------
# copy_images save|restore: the images as they were before the first try.
# An image on a tmpfs is saved beside it, on that tmpfs: it may be sparse
# past the largest file the temporary directory's filesystem holds (16
# TiB on ext4), and there its copy takes only the memory of what it has.
copy_images() {
	local n=0 i d
	for i in "${images[@]}"; do
		if [ "$1" = save ]; then
			origs[$n]=$work/orig.$n
			d=$(dirname "$(readlink -f -- "$i")")
			if [ "$(stat -f -c %T "$d")" = tmpfs ]; then
				origs[$n]=$(mktemp "$d/.run-guest-orig.XXXXXX") ||
					kt_die "cannot save $i beside it"
			fi
			cp --sparse=always "$i" "${origs[$n]}" ||
				kt_die "cannot save $i for a retry"
		else
			cp --sparse=always "${origs[$n]}" "$i"
		fi
		n=$((n + 1))
	done
}
[ "$tries" -gt 1 ] && copy_images save

drives=()
for i in "${images[@]}"; do
	drives+=(-drive "file=$i,format=raw,if=virtio,cache=writeback")
done
if [ -n "$resdir" ]; then
	resimg=$work/results.img
	truncate -s "${resmb}M" "$resimg"
	drives+=(-drive "file=$resimg,format=raw,if=virtio,cache=writeback")
fi
serial=$work/serial.log
if [ "$kt_arch" = amd64 ]; then
	# One socket per CPU: the kernel has no ACPI and finds CPUs in
	# SeaBIOS's MP table, which lists only the first CPU of each package
	# (QEMU puts all CPUs in one package by default).
	qemu=(qemu-system-x86_64 -accel tcg -nodefaults
		-smp "$cpus,sockets=$cpus,cores=1,threads=1")
	cmdline="console=ttyS0 tsc=reliable panic=-1 quiet${extra:+ $extra}"
else
	# the virt board's CPUs come from its device tree, all of them
	# possible and online (nr_cpu_ids = CPUS)
	qemu=(qemu-system-aarch64 -accel tcg -M virt -cpu cortex-a57 -nodefaults
		-smp "$cpus")
	cmdline="console=ttyAMA0 panic=-1 quiet${extra:+ $extra}"
fi
# rootfs is ramfs, as in the harness's own kernels (no CONFIG_TMPFS)
[ -z "$moddir" ] || cmdline="$cmdline rootfstype=ramfs"

if $interactive; then
	"${qemu[@]}" -nographic -no-reboot \
		-m "$mem" -kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
		-serial mon:stdio "${drives[@]}"
	exit $?
fi

result=
for try in $(seq 1 "$tries"); do
	[ "$try" -gt 1 ] && copy_images restore
	: >"$serial"
	[ -n "$resdir" ] && { rm -f "$resimg"; truncate -s "${resmb}M" "$resimg"; }
	t0=$(date +%s)
	"${qemu[@]}" -nographic -monitor none \
		-no-reboot -m "$mem" -kernel "$kernel" -initrd "$initrd" \
		-append "$cmdline" -serial "file:$serial" "${drives[@]}" \
		</dev/null >"$work/qemu.out" 2>&1 &
	qpid=$!
	started=false
	why=
	while :; do
		if ! kill -0 "$qpid" 2>/dev/null; then
			break
		fi
		now=$(date +%s)
		if ! $started; then
			if grep -q '^ORLOV-START' "$serial" 2>/dev/null; then
				started=true
				kt_log "try $try: guest up after $((now - t0))s"
			elif [ $((now - t0)) -ge "$boot_timeout" ]; then
				why="no guest start within ${boot_timeout}s"
				break
			fi
		fi
		if [ $((now - t0)) -ge "$timeout" ]; then
			why="timeout after ${timeout}s"
			break
		fi
		if grep -q '^ORLOV-RESULT rc=' "$serial" 2>/dev/null; then
			# let qemu exit by itself (reboot -f); give it a moment
			for _ in 1 2 3 4 5 6 7 8 9 10; do
				kill -0 "$qpid" 2>/dev/null || break
				sleep 1
			done
			break
		fi
		# a kernel that will not finish by itself (lib.sh): the retry
		# now rather than the timeout
		if fatal=$(kt_console_fatal "$serial"); then
			why="killed after $((now - t0))s, the console shows: $fatal"
			break
		fi
		sleep 0.5
	done
	if kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
		# a QEMU that does not stop on SIGTERM would hang the wait
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$qpid" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$qpid" 2>/dev/null || true
	fi
	wait "$qpid" 2>/dev/null || true
	qpid=
	[ -n "$conslog" ] && tr -d '\r' <"$serial" >"$conslog"
	result=$(tr -d '\r' <"$serial" | sed -n 's/^ORLOV-RESULT rc=\([0-9]*\).*/\1/p' | tail -n1)
	if [ -n "$result" ]; then
		kt_log "try $try: guest finished rc=$result in $(( $(date +%s) - t0 ))s"
		break
	fi
	[ -n "$why" ] || why="qemu exited without a result"
	kt_log "try $try: $why; console tail:"
	tr -d '\r' <"$serial" | tail -n 15 | sed 's/^/  | /' >&2
	sed 's/^/  qemu: /' "$work/qemu.out" | tail -n 5 >&2
done

if [ -z "$result" ]; then
	kt_log "no result after $tries tries"
	exit 99
fi

if [ -n "$resdir" ]; then
	mkdir -p "$resdir"
	tar -xf "$resimg" -C "$resdir" || kt_die "cannot unpack the guest's results"
fi

extract() {
	tr -d '\r' <"$serial" | sed -n '/^ORLOV-START/,/^ORLOV-RESULT rc=/p' |
		sed '1d;$d' | sed '${/^$/d}'
}
if [ -n "$outfile" ]; then
	extract >"$outfile"
else
	extract
fi
exit "$result"
