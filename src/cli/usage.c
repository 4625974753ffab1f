// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-populate --help: a screen of what an image builder needs; every
 * option with --help=all; the kernel model's knobs alone with
 * --help=kernel.  Apart from the parser, as the man page is: the text
 * grows without crowding the code (tests/t-usage.sh holds the three to
 * the man page, and --help to 40 lines).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli/options.h"
#include "source/tar.h"

/* One screen: the options a build step passes, the rest named. */
static const char usage_short[] =
"Fill the ext2/ext3/ext4 filesystem IMAGE with the tree SOURCE, every inode\n"
"and block where the kernel's driver (Linux 6.1's ext4, or ext2) would put\n"
"them: an image builder's image, laid out as the kernel lays it out, made\n"
"offline, without root, reproducibly.  SOURCE: a directory or an archive\n"
"(tar, cpio...; - for standard input); LAYERs: OCI layers over it.\n"
"\n"
"      --create SIZE      make IMAGE first, as mkfs.ext4 does (SIZE: 64M, 2G,\n"
"                         auto, auto+10%; or last, as mke2fs takes it)\n"
"      --fs-type T        with --create: ext4 (default), ext3 or ext2\n"
"  -b, --block-size N     with --create: 1024, 2048 or 4096\n"
"  -N, --inodes N         with --create: the number of inodes\n"
"      --mkfs-options S   with --create: more mke2fs options\n"
"  -L, --label NAME       the volume label\n"
"  -U, --uuid U           the filesystem UUID (a UUID, random, time, clear)\n"
"      --partition P      IMAGE is a disk: the filesystem is its partition P\n"
"      --offset BYTES     the filesystem starts BYTES into IMAGE\n"
"  -t, --target PATH      the directory in IMAGE to fill (default /)\n"
"      --uid-map MAP      owners FROM:TO[:COUNT][,...] (--gid-map: groups)\n"
"      --all-root         every file owned by user and group 0\n"
"      --root-owner U:G   owner and group of the target directory\n"
"      --devtable FILE    devices, FIFOs, modes and owners from a device table\n"
"      --dry-run          everything but the writing: what the run would take\n"
"      --json             the summary, or the error, as one JSON object\n"
"  -v, --verbose          one line per entry: path, inode, group\n"
"  -q, --quiet            print errors only\n"
"  -h, --help[=WHAT]      this; all: every option; kernel: the kernel model\n"
"  -V, --version          show the version and exit\n"
"\n"
"A failed run puts IMAGE back as it was.  SOURCE_DATE_EPOCH: two runs give\n"
"the same image.  Exit status: 0 done, 1 failed, 2 usage error.\n"
"Example: orlov-populate --create auto+10% rootfs.img rootfs.tar\n"
"Every option: --help=all, or man orlov-populate.\n";

static const char usage_create[] =
"\n"
"Making the image:\n"
"      --create SIZE      make a new filesystem in IMAGE first with mke2fs -F\n"
"                         (SIZE as mke2fs takes it: 64M, 2G, or blocks;\n"
"                         or last, after IMAGE and SOURCE, as in mke2fs);\n"
"                         IMAGE is overwritten.  auto[+N%|+SIZE]: the\n"
"                         smallest size the tree fits in (4 KiB blocks\n"
"                         unless --block-size), plus the margin.  An IMAGE\n"
"                         that holds data but no ext2/3/4 filesystem is\n"
"                         refused (arguments swapped?)\n"
"  -F, --force            with --create: overwrite such an IMAGE too\n"
"      --fs-type T        with --create: ext4 (default, as mkfs.ext4 makes it\n"
"                         with /etc/mke2fs.conf), ext3 or ext2\n"
"  -b, --block-size N     with --create: 1024, 2048 or 4096\n"
"  -N, --inodes N         with --create: the number of inodes\n"
"      --mkfs-options S   with --create: more mke2fs options, split at blanks\n"
"                         (not -E offset=: --offset, --partition)\n"
"  -L, --label NAME       the volume label (at most 16 bytes): mke2fs -L with\n"
"                         --create, else set on IMAGE as tune2fs -L does\n"
"  -U, --uuid U           the filesystem UUID: a UUID, random, time or clear;\n"
"                         mke2fs -U with --create (before SOURCE_DATE_EPOCH's),\n"
"                         else set on IMAGE as tune2fs -U does (metadata_csum\n"
"                         needs metadata_csum_seed)\n";

static const char usage_disk[] =
"\n"
"Disk images (the filesystem in a partition, or at an offset):\n"
"      --partition P      IMAGE is a disk image with a GPT or MBR partition\n"
"                         table: the filesystem is in partition P, its number\n"
"                         (1, 2, ...), GPT name or PARTUUID.  Nothing is\n"
"                         written outside it; a filesystem larger than the\n"
"                         partition is refused.  --create makes one in it\n"
"                         (auto: the whole partition)\n"
"      --offset BYTES     the filesystem starts BYTES into IMAGE\n"
"                         (mke2fs -E offset=)\n"
"                         Both commit in place (through the journal of an\n"
"                         ext3/ext4 image), never through a copy of the disk\n";

static const char usage_what[] =
"\n"
"What is copied:\n"
"  -t, --target PATH      existing directory in IMAGE to fill (default /)\n"
"      --all-root         every file owned by user and group 0\n"
"      --uid-map MAP      owners FROM:TO[:COUNT][,...]: COUNT ids from FROM\n"
"                         on become TO on (repeatable; others unchanged)\n"
"      --gid-map MAP      the same for groups.  A file whose owner or group\n"
"                         --all-root or a map changes loses its set-ID\n"
"                         bits, as with chown(2) (warned); a --devtable or\n"
"                         --fs-config mode keeps them\n"
"      --root-owner U:G   owner and group of the target directory\n"
"      --root-attrs       the target directory takes SOURCE's own mode,\n"
"                         owners, times and attributes (cp -a SOURCE/.);\n"
"                         --root-owner, given too, has the last word\n"
"      --whiteouts        a lone SOURCE read as an OCI layer: .wh. names\n"
"                         remove, never copied (implied by LAYERs)\n"
"      --merge            a directory of SOURCE that IMAGE has already is\n"
"                         filled, not refused (as cp -a does); names that\n"
"                         are not both directories are still refused.\n"
"                         lost+found at the image's root is always reused\n"
"      --casefold PATH    the directory PATH of SOURCE (relative to it) is\n"
"                         made casefolded, chattr +F (repeatable; the image\n"
"                         needs the casefold feature).  Directories +F in\n"
"                         SOURCE are so too; their subdirectories inherit\n"
"                         it; names that fold alike there are refused\n"
"      --devtable FILE    device table (makedevs/genext2fs format; a line may\n"
"                         stop after MODE): makes the directories, devices,\n"
"                         FIFOs it lists, sets mode and owner of those in\n"
"                         SOURCE and (a line for /) of the target directory\n"
"      --no-xattrs        do not copy extended attributes and ACLs\n"
"      --squash-perms     group and other permissions off for SOURCE's\n"
"                         entries (genext2fs -P, like umask 077; not the\n"
"                         device table's)\n"
"      --file-contexts F  label every entry as setfiles does with the SELinux\n"
"                         file_contexts F (its path in the image and its\n"
"                         type): security.selinux, replacing SOURCE's;\n"
"                         <<none>> or no match: no label.  F must be a\n"
"                         readable regular file (a directory is refused)\n"
"      --fs-config F      Android's canned fs_config F (e2fsdroid -C): PATH\n"
"                         UID GID MODE [capabilities=N] per line, PATH as in\n"
"                         the image without its leading /; every entry needs\n"
"                         a line.  Its owner, group and permissions win over\n"
"                         --uid-map, --all-root, --squash-perms and\n"
"                         --devtable; N becomes security.capability\n";

static const char usage_kernel[] =
"\n"
"The kernel model (where the kernel would put each inode and block).  The\n"
"defaults: Linux 6.1 (6.1.192), Debian 12's kernel, mounting the image as it\n"
"would; the kernel most images built today meet.\n"
"      --policy P         orlov (default) or oldalloc (the kernel's find_group_dir)\n"
"      --topdir R         start group of a top-level directory: hash (default,\n"
"                         ext4's half-MD4 name hash) or random (PRNG, --seed)\n"
"      --seed N           seed for --topdir random, and for the UUID that\n"
"                         --create derives from SOURCE_DATE_EPOCH (default 0)\n"
"      --block-colour N   block goal colour 0-15, the kernel's writer pid % 16\n"
"                         (default 0)\n"
"      --cpus N|up        the kernel's online CPUs: its free-inode, free-block\n"
"                         and directory counters lag by up to max(32, 2N) per\n"
"                         CPU on an SMP kernel; up: a uniprocessor build, exact\n"
"                         counters (default up)\n"
"      --possible-cpus P  the SMP kernel's possible CPUs (nr_cpu_ids: QEMU's\n"
"                         -smp N,maxcpus=P), at least --cpus N (default N):\n"
"                         ext4's delayed allocation stops delaying within\n"
"                         4 * max(32, 2N) * P blocks of free space\n"
"      --kernel V         the release modelled: 6.1 (default, 6.1.192), 6.1.N,\n"
"                         6.1-arm64, 6.8 (6.8.12), 6.8.N, 6.12 (6.12.118),\n"
"                         6.12.N or 6.12-arm64 (the same model as 6.12):\n"
"                         how the driver hashes attribute names\n"
"                         (signed char on x86 6.1, unsigned on arm64 and from\n"
"                         6.2 on) and whether an attribute block may come\n"
"                         from the file's reservation window (before 6.6);\n"
"                         --driver ext4: 6.1's mballoc, 6.5's criteria from\n"
"                         6.8 on, 6.12.77's lists from there; indirect-mapped\n"
"                         files' blocks without mb_optimize_scan before\n"
"                         6.1.165, in 6.8 and before 6.12.75\n"
"      --mb-optimize-scan yes|no  ext4 mounted -o mb_optimize_scan=1 or =0\n"
"                         (default: the kernel's, on from 16 groups)\n"
"      --driver D         ext2: the ext2 driver; ext4: Linux 6.1's ext4 driver,\n"
"                         as Debian's and Ubuntu's kernels mount ext2 and ext3\n"
"                         images too (mballoc, hash-tree directories,\n"
"                         attributes in large inodes; extents and flex groups\n"
"                         on ext4 images; small files and directories in the\n"
"                         inode with inline_data, which only ext4 takes).\n"
"                         Default: ext4 for an image with a\n"
"                         feature only ext4 writes (extent, flex_bg, 64bit,\n"
"                         metadata_csum, uninit_bg, quota, project, ...),\n"
"                         else ext2.  Project: a new inode gets project 0,\n"
"                         or its parent's under PROJINHERIT (chattr +P)\n"
"      --delalloc         the ext4 driver delays file data blocks until\n"
"                         writeback (all after the tree, in creation order),\n"
"                         as a mount -t ext4 does; --no-delalloc: as\n"
"                         -o nodelalloc and ext2/ext3 mounts.  Default: what\n"
"                         mounting the image gives (delayed for ext4 images\n"
"                         unless their default mount options say nodelalloc).\n"
"                         Delayed data is read from SOURCE at the writeback:\n"
"                         a file changed before then is an error\n"
"      --rotational yes|no  whether the disk is rotational (yes, default) or not\n"
"                         (an SSD, NVMe, a loop device on one): ext4's mballoc\n"
"                         tries 4 groups in turn before its optimize_scan\n"
"                         lists on a rotational disk, none otherwise\n";

static const char usage_safety[] =
"\n"
"Safety and output:\n"
"      --dry-run          do everything but write: print the inodes and blocks\n"
"                         the copy takes (exactly what the real run takes);\n"
"                         with --create, made in a scratch file in TMPDIR\n"
"      --json             print the summary, or the error, as one JSON object\n"
"                         on stdout (-v lines go to stderr); bytes of names\n"
"                         that are not UTF-8, and %, as %XX\n"
"      --trace FILE       write one record per allocation decision to FILE\n"
"      --undo FILE        save every block's old contents in the new undo file\n"
"                         FILE first; e2undo FILE IMAGE restores the image\n"
"      --atomic           always write a copy of the image file next to it and\n"
"                         rename it over IMAGE at the end (the default for an\n"
"                         image file without a journal)\n"
"      --in-place         never a copy: write IMAGE itself (through its journal\n"
"                         if it has one; else, killed while it commits, it\n"
"                         needs e2fsck -fy)\n"
"      --no-fsck          do not run e2fsck -fn on IMAGE before writing (it\n"
"                         refuses an image e2fsck finds errors in)\n"
"      --jobs N           1: one thread; 2: a second one opens the source's\n"
"                         files ahead of the first, which helps it when it\n"
"                         falls behind (default with 2 or more CPUs); the\n"
"                         image is the same either way\n"
"  -v, --verbose          one line per entry: path, inode, group; at the\n"
"                         end the driver, delayed allocation and kernel\n"
"                         release used, and whether given\n"
"  -q, --quiet            print errors only\n"
"  -h, --help[=WHAT]      show the short help, every option (all) or the\n"
"                         kernel model's (kernel), and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"A failed write puts the image back as it was.  Killed, the run leaves the old\n"
"filesystem or the new one: an ext2 image file is written as a copy renamed\n"
"over it at the end (so is --create's new image); an ext3 image commits\n"
"through its journal (mount or e2fsck -p replays it).  A device, an image\n"
"with several hard links, --undo or --in-place: written in place, and an\n"
"ext2 filesystem killed while it commits needs e2fsck -fy (nothing that was\n"
"there is lost), or e2undo with --undo.\n"
"Numbers are decimal (a leading 0 is no octal).  Times an inode cannot hold\n"
"are clamped to its range as the kernel clamps them (128-byte inodes: 1901\n"
"to 2038).\n"
"Environment: SOURCE_DATE_EPOCH (later times are clamped to it, and it is\n"
"the superblock's write time; with --create also the creation times, UUID\n"
"(with a digest of the tree and options) and hash seed: two runs give\n"
"identical images; refused beyond what the image's inodes hold); TMPDIR\n"
"(an archive's file data, and what passes a memory budget).\n";

static const char *const usage_parts[] = {
	usage_create, usage_disk, usage_what, usage_kernel, usage_safety,
};

int usage_which(const char *arg)
{
	if (!arg)
		return HELP_SHORT;
	if (!strcmp(arg, "all"))
		return HELP_ALL;
	if (!strcmp(arg, "kernel"))
		return HELP_KERNEL;
	return -1;
}

void options_usage(FILE *f, const char *prog, int which)
{
	size_t i;

	fprintf(f, "Usage: %s [OPTIONS] IMAGE SOURCE [LAYER...]\n", prog);
	if (which == HELP_SHORT) {
		fputs(usage_short, f);
		return;
	}
	if (which == HELP_KERNEL) {
		/* its header line says what the knobs are for */
		fputs(usage_kernel + 1, f);
		return;
	}
	fputs(
"Fill the ext2/ext3/ext4 filesystem IMAGE with the directory tree SOURCE,\n"
"placing every inode and block where the kernel's driver would (Linux 6.1's\n"
"ext4 driver, or its ext2 driver: Orlov allocator, mballoc).\n", f);
	fputs(tar_supported() ?
"SOURCE may also be an archive SOURCE (tar, pax, cpio...; gzip, xz, zstd...;\n"
"- reads standard input): read once into TMPDIR, the same image results.\n"
"LAYERs (archives or directories) go over SOURCE in order as OCI image layers,\n"
"into one tree before anything is written: .wh.NAME removes NAME, .wh..wh..opq\n"
"empties its directory of what lower layers gave.  --whiteouts reads a lone\n"
"SOURCE so too; else its .wh. names are copied as they are.\n" :
"This build reads no archives (configured --without-libarchive).\n", f);
	for (i = 0; i < sizeof(usage_parts) / sizeof(usage_parts[0]); i++)
		fputs(usage_parts[i], f);
}
