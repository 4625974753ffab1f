// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gentree - generate a deterministic (seeded) source tree for the
 * crosscheck corpus.
 *
 *   gentree [--seed N] [--profile P] [--scale N] [--no-special] DIR
 *
 * DIR must not exist.  The same arguments give the same tree (names,
 * sizes, contents, holes, modes, links) on any host; ownership and device
 * nodes only when run as root (else --no-special is implied for devices).
 *
 * Profiles:
 *   mixed  nested directories with a mix of everything (default)
 *   deep   a long chain of nested directories with a few entries each
 *   wide   a few directories with thousands of entries (multi-block dirs)
 *   big    files around the direct / indirect / double-indirect boundaries
 *          of 1 KiB, 2 KiB and 4 KiB blocks, and sparse files
 *   small  many small files and fast symlinks (lots of inodes)
 *   flat   one directory flat/ with --scale entries (default 100000):
 *          mostly empty files, some tiny files, fast symlinks, fifos and
 *          a few subdirectories (a huge linear ext2 directory)
 *   tind   one sparse file whose data crosses the triple-indirect boundary
 *          of 1 KiB blocks (logical block 12+256+65536, offset 64.26 MiB;
 *          full size 64.5 MiB), and a few small files around it
 *   fill   --scale KiB (default 8192) of file data in 1 KiB..2 MiB files
 *          spread over directories d0..d7, then z/ with many empty files,
 *          fast symlinks, fifos and subdirectories (for images that fill
 *          up: later entries find no room in their own group)
 *   sparse one sparse file of --scale (default 800) 4 KiB data ranges,
 *          one at 1 MiB and then one every 2 MiB (with 1 KiB blocks each
 *          in a 2 MiB preallocation window of its own: more than 641
 *          live at once makes 6.1's ext4 trim the file's oldest), then
 *          a few small files that take blocks after it
 *   xattr  the mixed tree with extended attributes: user.* (a common
 *          value shared by many inodes, unique ones of 0..300 bytes, a
 *          name with bytes over 0x7f), POSIX
 *          access ACLs with named users, default ACLs that the entries
 *          below inherit, and as root trusted.* and
 *          security.capability; then same/ with 1100 empty files carrying
 *          one identical attribute (more than one shared block can hold:
 *          its refcount stops at 1025)
 *   spread the xattr tree, then tind/ as in the tind profile (a sparse
 *          file of five extents: one more than the inode holds, so an
 *          extent-tree leaf block): many directories directly in DIR,
 *          for a target whose subdirectories ext4 spreads over the
 *          whole image by name hash (the root, or EXT4_TOPDIR_FL)
 *   casefold  for a directory made casefolded (+F): cf/ with --scale
 *          (default 3000) names of mixed case, accented ones precomposed
 *          and decomposed, sharp s, and every 40th not valid UTF-8 (a
 *          bare continuation byte, a cut sequence, 0xff), no two folding
 *          alike; cf/sub/ with a few more below, cf/sub/deeper/; and
 *          plain/ with names that differ only in case
 * --scale is roughly the number of entries (default depends on profile).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

static uint64_t rng_state;
static int is_root, no_special, with_xattrs;
static long budget;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "gentree: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static unsigned rn(unsigned n) /* 0..n-1 */
{
	return n ? (unsigned)((rnd() >> 11) % n) : 0;
}

/* ---- regular files ------------------------------------------------------ */

struct fileref {
	char *path;
};
static struct fileref *files;
static size_t nfiles, afiles;

static void remember(const char *path)
{
	if (nfiles == afiles) {
		afiles = afiles ? 2 * afiles : 256;
		files = realloc(files, afiles * sizeof(*files));
		if (!files)
			exit(1);
	}
	files[nfiles++].path = strdup(path);
}

static void fill(unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = rnd();

		for (size_t j = 0; j < 8 && i + j < n; j++)
			buf[i + j] = (unsigned char)(v >> (8 * j)) | 1;
	}
}

static void write_range(int fd, const char *path, off_t off, off_t len)
{
	static unsigned char buf[65536];

	while (len > 0) {
		size_t n = len > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)len;

		fill(buf, n);
		if (pwrite(fd, buf, n, off) != (ssize_t)n)
			die("write", path);
		off += n;
		len -= n;
	}
}

/* data ranges are 4096-aligned so that every host filesystem reports them
 * the same way via SEEK_DATA (the last may end unaligned at EOF) */
static void make_file(const char *path, off_t size, int sparse, unsigned mode)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);

	if (fd < 0)
		die("create", path);
	if (!sparse) {
		write_range(fd, path, 0, size);
	} else {
		off_t pos = 0;
		unsigned pieces = 1 + rn(4);

		for (unsigned i = 0; i < pieces && size > 0; i++) {
			off_t gap = (off_t)rn((unsigned)(size / 4096 / pieces + 1)) * 4096;
			off_t len = (off_t)(1 + rn(8)) * 4096;

			pos += gap;
			if (pos >= size)
				break;
			if (pos + len > size)
				len = size - pos;
			write_range(fd, path, pos, len);
			pos += len;
		}
		if (ftruncate(fd, size) < 0)
			die("ftruncate", path);
	}
	if (fchmod(fd, mode) < 0)
		die("chmod", path);
	close(fd);
	remember(path);
}

/* sizes around the block-map boundaries for 1/2/4 KiB blocks */
static off_t boundary_size(int huge_ok)
{
	static const unsigned bs[] = { 1024, 2048, 4096 };
	unsigned b = bs[rn(3)];
	off_t per = b / 4;
	off_t edges[] = {
		12, 12 + per, 12 + per + per * per,
	};
	off_t e = edges[rn(b == 1024 && huge_ok ? 3 : 2)];
	long delta = (long)rn(3) - 1; /* -1, 0, +1 blocks */
	off_t sz = (e + delta) * b;

	switch (rn(3)) {
	case 0: return sz - 1;
	case 1: return sz;
	default: return sz + 1;
	}
}

static off_t small_size(void)
{
	switch (rn(6)) {
	case 0: return 0;
	case 1: return 1 + rn(100);
	case 2: return 1 + rn(4096);
	case 3: return 4096 * (1 + rn(4));
	case 4: return 1 + rn(20000);
	default: return 1 + rn(60000);
	}
}

/* ---- names --------------------------------------------------------------- */

static void gen_name(char *out, size_t cap, unsigned idx)
{
	static const char *stems[] = {
		"a", "B", "file", "dir", "Zeta", "_x", "data", "README",
		"x.y.z", "l" /* long */, "caf\xc3\xa9", "sp ace",
	};
	const char *stem = stems[rn(sizeof(stems) / sizeof(stems[0]))];

	if (!strcmp(stem, "l") && rn(4) == 0) {
		size_t len = 40 + rn(200);
		size_t n = 0;

		if (len > cap - 16)
			len = cap - 16;
		for (; n < len; n++)
			out[n] = 'a' + rn(26);
		snprintf(out + n, cap - n, "%u", idx);
		return;
	}
	snprintf(out, cap, "%s%u", stem, idx);
}

/* ---- extended attributes --------------------------------------------------- */

static void xset(const char *path, const char *name, const void *v, size_t n)
{
	if (lsetxattr(path, name, v, n, 0) < 0)
		die("setxattr", path);
}

/* Set an ACL in the xattr form (version 2, 8-byte entries); a named user
 * gets an id 1000..1002. */
static void set_acl_xattr(const char *path, const char *name,
			  const unsigned short *tag, const unsigned short *perm,
			  unsigned n)
{
	unsigned char a[4 + 5 * 8];

	memset(a, 0, sizeof(a));
	a[0] = 2;	/* POSIX_ACL_XATTR_VERSION */
	for (unsigned i = 0; i < n; i++) {
		unsigned char *e = a + 4 + 8 * i;
		unsigned id = tag[i] == 0x02 ? 1000 + rn(3) : 0xffffffffu;

		e[0] = (unsigned char)tag[i];
		e[2] = (unsigned char)perm[i];
		e[4] = id & 0xff;
		e[5] = (id >> 8) & 0xff;
		e[6] = (id >> 16) & 0xff;
		e[7] = id >> 24;
	}
	xset(path, name, a, 4 + 8 * n);
}

/* An access ACL with a named user: setting it also sets the group bits of
 * the mode to the mask, as setfacl does. */
static void set_acl(const char *path, mode_t mode)
{
	static const unsigned short tag[5] = { 0x01, 0x02, 0x04, 0x10, 0x20 };
	unsigned short perm[5];

	perm[0] = (mode >> 6) & 7;
	perm[1] = 4 | (rn(2) ? 2 : 0);
	perm[2] = (mode >> 3) & 5;
	perm[3] = perm[1] | perm[2];
	perm[4] = mode & 5;
	set_acl_xattr(path, "system.posix_acl_access", tag, perm, 5);
}

/* A default ACL, set before the directory is filled so that its entries
 * inherit it (on this host as in the replay): with a named user and a
 * mask, with a mask only, or the three base entries only (then children
 * get no access ACL at all). */
static void set_default_acl(const char *path)
{
	unsigned short tag[5], perm[5];
	unsigned kind = rn(3), n = 0;

	tag[n] = 0x01, perm[n++] = 7;
	if (kind == 0)
		tag[n] = 0x02, perm[n++] = 6;
	tag[n] = 0x04, perm[n++] = 5;
	if (kind < 2)
		tag[n] = 0x10, perm[n++] = 7;
	tag[n] = 0x20, perm[n++] = rn(2) ? 5 : 0;
	set_acl_xattr(path, "system.posix_acl_default", tag, perm, n);
}

static void add_xattrs(const char *path)
{
	struct stat st;
	unsigned k;

	/* other profiles must not draw from the generator here */
	if (!with_xattrs || lstat(path, &st) < 0)
		return;
	k = rn(100);
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* user.* and ACLs are for files and directories only */
		if (is_root && k < 30)
			xset(path, "trusted.note", "special", 7);
		return;
	}
	if (k < 40)
		xset(path, "user.mime_type", "text/plain", 10);
	/* a name with bytes over 0x7f: hashed as signed char by x86 6.1,
	 * as unsigned by 6.2+ (no draw from the generator) */
	if (k >= 15 && k < 25)
		xset(path, "user.r\xc3\xa9sum\xc3\xa9", "v1", 2);
	if (k >= 30 && k < 60) {
		static unsigned char v[300];
		size_t n = rn(301);

		for (size_t i = 0; i < n; i++)
			v[i] = (unsigned char)rnd();
		xset(path, n % 2 ? "user.comment" : "user.c", v, n);
	}
	if (k >= 50 && k < 70)
		set_acl(path, st.st_mode);
	if (is_root && k >= 65 && k < 75)
		xset(path, "trusted.overlay.opaque", "y", 1);
	if (is_root && S_ISREG(st.st_mode) && k >= 72 && k < 80) {
		/* VFS_CAP_REVISION_2 | effective, CAP_NET_RAW permitted */
		static const unsigned char cap[20] = {
			0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00,
		};

		xset(path, "security.capability", cap, sizeof(cap));
	}
}

static void gen_same(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/same", dir);
	if (mkdir(path, 0755) < 0)
		die("mkdir", path);
	for (int i = 0; i < 1100; i++) {
		snprintf(path, sizeof(path), "%s/same/f%04d", dir, i);
		make_file(path, 0, 0, 0644);
		xset(path, "user.origin", "generated", 9);
	}
}

/* ---- tree ----------------------------------------------------------------- */

static void make_entry(const char *dir, unsigned idx, int depth, int maxdepth,
		       int kind_bias);

static void make_dir(const char *path, int depth, int maxdepth, unsigned nent,
		     int kind_bias)
{
	unsigned mode = rn(8) == 0 ? 0750 : 0755;

	if (mkdir(path, 0700) < 0)
		die("mkdir", path);
	if (with_xattrs && rn(4) == 0)
		set_default_acl(path);
	for (unsigned i = 0; i < nent && budget > 0; i++)
		make_entry(path, i, depth, maxdepth, kind_bias);
	if (chmod(path, mode) < 0)
		die("chmod", path);
	if (is_root && rn(4) == 0 && chown(path, rn(3) * 1000, rn(3) * 100) < 0)
		die("chown", path);
	add_xattrs(path);
}

enum { BIAS_MIXED, BIAS_SMALL, BIAS_BIG };

static void make_entry_1(const char *path, unsigned k, int depth,
			 int maxdepth, int kind_bias);

static void make_entry(const char *dir, unsigned idx, int depth, int maxdepth,
		       int kind_bias)
{
	char name[300], path[4096];
	unsigned k = rn(100);	/* before the name: keeps the corpus trees */

	gen_name(name, sizeof(name), idx);
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return;
	budget--;
	make_entry_1(path, k, depth, maxdepth, kind_bias);
	/* directories got theirs after their contents */
	if (with_xattrs) {
		struct stat st;

		if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
			add_xattrs(path);
	}
}

static void make_entry_1(const char *path, unsigned k, int depth,
			 int maxdepth, int kind_bias)
{
	if (depth < maxdepth && k < (kind_bias == BIAS_SMALL ? 5 : 12)) {
		make_dir(path, depth + 1, maxdepth, 2 + rn(12), kind_bias);
		return;
	}
	if (k < 60) {
		off_t size;
		int sparse = 0;

		if (kind_bias == BIAS_BIG || rn(40) == 0) {
			sparse = rn(3) == 0;
			size = boundary_size(sparse);
		} else {
			size = small_size();
		}
		make_file(path, size, sparse,
			  rn(10) == 0 ? 0755 : (rn(20) == 0 ? 04755 : 0644));
		if (is_root && rn(8) == 0 && chown(path, 1000 + rn(3), 100) < 0)
			die("chown", path);
		return;
	}
	if (k < 72) { /* fast symlink */
		char t[64];

		snprintf(t, sizeof(t), "../target-%u", rn(1000));
		if (symlink(t, path) < 0)
			die("symlink", path);
		return;
	}
	if (k < 78) { /* slow symlink: >= 60 bytes, sometimes > one block */
		static char t[1100];
		size_t len = rn(4) == 0 ? 300 + rn(700) : 60 + rn(200);

		for (size_t i = 0; i < len; i++)
			t[i] = (i % 16 == 15) ? '/' : 'a' + rn(26);
		t[len] = 0;
		if (symlink(t, path) < 0)
			die("symlink", path);
		return;
	}
	if (k < 86 && nfiles) { /* hard link to an earlier file */
		const char *old = files[rn((unsigned)nfiles)].path;

		if (link(old, path) < 0)
			die("link", path);
		return;
	}
	if (k < 90) {
		if (mkfifo(path, 0644) < 0)
			die("mkfifo", path);
		return;
	}
	if (k < 94 && is_root && !no_special) {
		if (mknod(path, (rn(2) ? S_IFCHR : S_IFBLK) | 0660,
			  makedev(1 + rn(8), rn(256))) < 0)
			die("mknod", path);
		return;
	}
	if (k < 96 && is_root && !no_special) {
		if (mknod(path, S_IFSOCK | 0755, 0) < 0)
			die("mknod", path);
		return;
	}
	make_file(path, small_size(), 0, 0644);
}

/* ---- special profiles ------------------------------------------------------ */

static void xmkdir(const char *path)
{
	if (mkdir(path, 0755) < 0)
		die("mkdir", path);
}

static void make_fifo(const char *path)
{
	if (mkfifo(path, 0644) < 0)
		die("mkfifo", path);
}

static void make_fast_symlink(const char *path)
{
	char t[64];

	snprintf(t, sizeof(t), "../target-%u", rn(1000));
	if (symlink(t, path) < 0)
		die("symlink", path);
}

/* one huge flat directory: the payload stays small (mostly empty files) */
static void gen_flat(const char *dir, long n)
{
	char path[4096], sub[4200];
	size_t l;

	xmkdir(dir);
	snprintf(path, sizeof(path), "%s/flat", dir);
	xmkdir(path);
	l = strlen(path);
	for (long i = 0; i < n; i++) {
		unsigned k = rn(1000);

		switch (rn(4)) { /* names of different lengths pack differently */
		case 0: snprintf(path + l, sizeof(path) - l, "/e%ld", i); break;
		case 1: snprintf(path + l, sizeof(path) - l, "/entry-%07ld", i); break;
		case 2: snprintf(path + l, sizeof(path) - l, "/n%ld.%u.tmp", i, rn(100000)); break;
		default: snprintf(path + l, sizeof(path) - l, "/a-rather-longer-name-%ld-%u", i, rn(1000)); break;
		}
		if (k < 2) { /* a few subdirectories with a tiny file each */
			xmkdir(path);
			snprintf(sub, sizeof(sub), "%s/f", path);
			make_file(sub, 1 + rn(3000), 0, 0644);
		} else if (k < 20) {
			make_file(path, 1 + rn(2000), 0, 0644);
		} else if (k < 35) {
			make_fast_symlink(path);
		} else if (k < 40) {
			make_fifo(path);
		} else {
			make_file(path, 0, 0, rn(10) ? 0644 : 0600);
		}
	}
}

static void gen_casefold(const char *dir, long n)
{
	/* distinct when folded, and none a prefix of another's fold plus
	 * digits: the index after each keeps every name unique */
	static const char *const stems[] = {
		"File-", "README.", "Zeta_", "caf\xc3\xa9-", "CAFE\xcc\x81-",
		"Stra\xc3\x9f" "e-", "\xce\xa9mega-", "MiXeD.CaSe.", "x",
	};
	static const char *const bad[] = { "inv\x80-", "cut\xc3-", "ff\xff-" };
	char path[4096];

	xmkdir(dir);
	snprintf(path, sizeof(path), "%s/cf", dir);
	xmkdir(path);
	snprintf(path, sizeof(path), "%s/cf/sub", dir);
	xmkdir(path);
	snprintf(path, sizeof(path), "%s/cf/sub/deeper", dir);
	xmkdir(path);
	snprintf(path, sizeof(path), "%s/plain", dir);
	xmkdir(path);
	for (long i = 0; i < n; i++) {
		const char *stem = i % 40 == 39 ? bad[rn(3)] :
				   stems[rn(sizeof(stems) / sizeof(stems[0]))];

		snprintf(path, sizeof(path), "%s/cf/%s%ld", dir, stem, i);
		make_file(path, rn(8) ? 0 : 1 + rn(3000), 0, 0644);
	}
	for (long i = 0; i < 60; i++) {
		snprintf(path, sizeof(path), "%s/cf/sub/%s%ld", dir,
			 i % 2 ? "Sub-" : "sub\xc3\xa9-", i);
		make_file(path, 1 + rn(2000), 0, 0644);
		snprintf(path, sizeof(path), "%s/cf/sub/deeper/D%ld", dir, i);
		make_file(path, 0, 0, 0644);
		snprintf(path, sizeof(path), "%s/plain/%s%ld", dir,
			 i % 2 ? "Same-" : "same-", i / 2);
		make_file(path, 0, 0, 0644);
	}
}

/* data ranges (4 KiB units) of the triple-indirect file: direct blocks,
 * single indirect, double indirect, across the triple-indirect boundary
 * of 1 KiB blocks (logical block 65804 = 4 KiB unit 16451) and beyond */
static void gen_tind(const char *dir)
{
	static const long ranges[][2] = {
		{ 0, 2 }, { 4, 1 }, { 70, 2 }, { 16449, 4 }, { 16500, 1 },
	};
	char path[4096];
	int fd;

	xmkdir(dir);
	snprintf(path, sizeof(path), "%s/a-small", dir);
	make_file(path, 5000, 0, 0644);
	snprintf(path, sizeof(path), "%s/m-tind", dir);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0)
		die("create", path);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		write_range(fd, path, ranges[i][0] * 4096, ranges[i][1] * 4096);
	if (ftruncate(fd, 16501L * 4096) < 0)
		die("ftruncate", path);
	close(fd);
	snprintf(path, sizeof(path), "%s/z-after", dir);
	make_file(path, 9000, 0, 0644);
	snprintf(path, sizeof(path), "%s/z-dir", dir);
	xmkdir(path);
	snprintf(path, sizeof(path), "%s/z-dir/f", dir);
	make_file(path, 3000, 0, 0644);
}

/* a tree meant to (nearly) fill its image: big data first, then entries
 * that need inodes but (almost) no blocks */
static void gen_fill(const char *dir, long kib)
{
	char path[4096];
	long left = kib * 1024;

	xmkdir(dir);
	for (unsigned d = 0; left > 0; d = (d + 1) % 8) {
		unsigned nsub = 1 + rn(3);

		snprintf(path, sizeof(path), "%s/d%u", dir, d);
		if (access(path, F_OK) != 0)
			xmkdir(path);
		for (unsigned s = 0; s < nsub && left > 0; s++) {
			off_t sz = rn(4) == 0 ? 1 + rn(8192) : 65536 + (off_t)rn(2048) * 1024;

			if (sz > left)
				sz = left;
			snprintf(path, sizeof(path), "%s/d%u/f%ld-%u", dir, d, left, s);
			make_file(path, sz, 0, 0644);
			left -= sz;
		}
		if (rn(3) == 0) {
			snprintf(path, sizeof(path), "%s/d%u/sub%ld", dir, d, left);
			xmkdir(path);
		}
	}
	snprintf(path, sizeof(path), "%s/z", dir);
	xmkdir(path);
	for (unsigned s = 0; s < 12; s++) {
		snprintf(path, sizeof(path), "%s/z/s%02u", dir, s);
		xmkdir(path);
		for (unsigned i = 0; i < 40; i++) {
			unsigned k = rn(10);

			snprintf(path, sizeof(path), "%s/z/s%02u/e%02u", dir, s, i);
			if (k < 6)
				make_file(path, 0, 0, 0644);
			else if (k < 8)
				make_fast_symlink(path);
			else if (k < 9)
				make_fifo(path);
			else
				xmkdir(path);
		}
	}
}

/* a sparse file of @n separate one-page ranges 2 MiB apart, and files
 * written after it (what a trim gave back is where they can land) */
static void gen_sparse(const char *dir, long n)
{
	char path[4096];
	int fd;

	xmkdir(dir);
	snprintf(path, sizeof(path), "%s/m-sparse", dir);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0)
		die("create", path);
	for (long k = 0; k < n; k++)
		write_range(fd, path, (1L << 20) + k * (2L << 20), 4096);
	close(fd);
	for (unsigned i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "%s/z-after%u", dir, i);
		make_file(path, 4096 + (off_t)rn(64) * 1024, 0, 0644);
	}
}

int main(int argc, char **argv)
{
	unsigned long long seed = 1;
	const char *profile = "mixed", *dir = NULL;
	long scale = -1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
			profile = argv[++i];
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
			scale = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--no-special"))
			no_special = 1;
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else {
			fprintf(stderr, "usage: gentree [--seed N] [--profile mixed|deep|wide|big|small|flat|tind|fill|sparse|xattr|spread|casefold] [--scale N] [--no-special] DIR\n");
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr, "gentree: no DIR\n");
		return 2;
	}
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
	if (!rng_state)
		rng_state = 1;
	is_root = geteuid() == 0;
	umask(0);

	if (!strcmp(profile, "mixed")) {
		budget = scale > 0 ? scale : 500;
		if (mkdir(dir, 0755) < 0)
			die("mkdir", dir);
		for (unsigned i = 0; budget > 0; i++)
			make_entry(dir, i, 0, 5, BIAS_MIXED);
	} else if (!strcmp(profile, "small")) {
		budget = scale > 0 ? scale : 2000;
		if (mkdir(dir, 0755) < 0)
			die("mkdir", dir);
		for (unsigned i = 0; budget > 0; i++)
			make_entry(dir, i, 0, 3, BIAS_SMALL);
	} else if (!strcmp(profile, "big")) {
		budget = scale > 0 ? scale : 40;
		if (mkdir(dir, 0755) < 0)
			die("mkdir", dir);
		for (unsigned i = 0; budget > 0; i++)
			make_entry(dir, i, 0, 1, BIAS_BIG);
	} else if (!strcmp(profile, "deep")) {
		char path[4096];
		long depth = scale > 0 ? scale : 60;

		snprintf(path, sizeof(path), "%s", dir);
		if (mkdir(path, 0755) < 0)
			die("mkdir", path);
		for (long d = 0; d < depth; d++) {
			size_t l = strlen(path);

			budget = 1 + rn(4);
			for (unsigned i = 0; budget > 0; i++)
				make_entry(path, i, 0, 0, BIAS_SMALL);
			if (l + 8 >= sizeof(path))
				break;
			snprintf(path + l, sizeof(path) - l, "/d%ld", d);
			if (mkdir(path, 0755) < 0)
				die("mkdir", path);
		}
	} else if (!strcmp(profile, "wide")) {
		char path[4096];
		long n = scale > 0 ? scale : 3000;

		if (mkdir(dir, 0755) < 0)
			die("mkdir", dir);
		for (int w = 0; w < 3; w++) {
			snprintf(path, sizeof(path), "%s/wide%d", dir, w);
			if (mkdir(path, 0755) < 0)
				die("mkdir", path);
			budget = w == 0 ? n : n / 4;
			for (unsigned i = 0; budget > 0; i++)
				make_entry(path, i, 0, w == 2 ? 2 : 0, BIAS_SMALL);
		}
	} else if (!strcmp(profile, "casefold")) {
		gen_casefold(dir, scale > 0 ? scale : 3000);
	} else if (!strcmp(profile, "flat")) {
		gen_flat(dir, scale > 0 ? scale : 100000);
	} else if (!strcmp(profile, "tind")) {
		gen_tind(dir);
	} else if (!strcmp(profile, "fill")) {
		gen_fill(dir, scale > 0 ? scale : 8192);
	} else if (!strcmp(profile, "sparse")) {
		gen_sparse(dir, scale > 0 ? scale : 800);
	} else if (!strcmp(profile, "xattr") || !strcmp(profile, "spread")) {
		/* spread: xattr's tree, smaller, and tind's file beside it */
		int spread = profile[0] == 's';
		char path[4096];

		budget = scale > 0 ? scale : spread ? 300 : 500;
		with_xattrs = 1;
		if (mkdir(dir, 0755) < 0)
			die("mkdir", dir);
		for (unsigned i = 0; budget > 0; i++)
			make_entry(dir, i, 0, 4, BIAS_MIXED);
		gen_same(dir);
		if (spread) {
			snprintf(path, sizeof(path), "%s/tind", dir);
			gen_tind(path);
		}
	} else {
		fprintf(stderr, "gentree: unknown profile %s\n", profile);
		return 2;
	}
	return 0;
}
