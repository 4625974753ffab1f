// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * replay - record a source tree as a creation-order manifest (on the host)
 * and recreate it with plain system calls (in a QEMU guest), so that the
 * real kernel allocates inodes and blocks for exactly the operation sequence
 * orlov-populate models.
 *
 *   replay manifest SRC
 *       Print the manifest of SRC (not including SRC itself): depth first,
 *       a directory before its contents, siblings in strcmp order of their
 *       raw names, symlinks never followed.  Lines:
 *         d MODE UID GID PATH
 *         f MODE UID GID SIZE PATH EXTENTS      EXTENTS = off+len,... or -
 *         l UID GID PATH TARGET
 *         h PATH OLDPATH                        2nd+ sighting of an inode
 *         c|b MODE UID GID MAJOR MINOR PATH
 *         p MODE UID GID PATH                   fifo
 *         s MODE UID GID PATH                   socket
 *         x NAME VALUE                          extended attribute of the
 *                                               entry above (not after h)
 *       MODE is octal permission bits (07777); PATH, OLDPATH, TARGET and
 *       NAME have bytes < 0x21, '%' and > 0x7e written as %XX; VALUE is hex,
 *       or - when empty.  An entry's attributes come in the order of ext2's
 *       entry table (name index: user 1, posix_acl_access 2,
 *       posix_acl_default 3, trusted 4, security 6; then name length; then
 *       name bytes), which is the order orlov-populate sets them in.
 *
 *   replay run [--colour N] [--cpu C] [--merge] [--casefold=PATH]...
 *              MANIFEST PAYLOAD DEST
 *       With --cpu, first pin this process (and so every child) to CPU C
 *       with sched_setaffinity: on an SMP kernel the free-inode, -block
 *       and directory percpu counters are then changed from one CPU only,
 *       the one case whose lag is deterministic.
 *       Fork until getpid() % 16 == N (default 0), then create every entry
 *       of MANIFEST under DEST, in order, in this one process; file data is
 *       read from PAYLOAD/PATH.  A regular file is created, written,
 *       chowned and chmodded, given its attributes (fsetxattr) and closed;
 *       other entries get theirs with lsetxattr after their chown/chmod.
 *       Then an entry other than a symlink loses the POSIX ACLs it
 *       inherited but its source does not have (system.posix_acl_access,
 *       and for a directory system.posix_acl_default), so that the tree
 *       ends up with exactly the source's attributes.
 *       A directory named by --casefold (its manifest PATH) is made
 *       casefolded as soon as it is made, empty: FS_CASEFOLD_FL added
 *       with FS_IOC_SETFLAGS, as chattr +F adds it.
 *       Stops at the first error (exit 1).
 *
 * Build: gcc -static -O2 -o replay replay.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

static const char *prog = "replay";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

/* ---------------------------------------------------------------- escape */

static void put_escaped(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x21 || *p == '%' || *p > 0x7e)
			fprintf(out, "%%%02X", *p);
		else
			fputc(*p, out);
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* in place */
static char *unescape(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (*r == '%') {
			int h = r[1] ? hexval(r[1]) : -1;
			int l = (h >= 0 && r[2]) ? hexval(r[2]) : -1;

			if (h < 0 || l < 0)
				die("bad escape in manifest: %s", s);
			*w++ = (char)(h * 16 + l);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
	return s;
}

/* -------------------------------------------------------------- manifest */

struct link_ent {
	dev_t dev;
	ino_t ino;
	char *path;
};

static struct link_ent *links;
static size_t nlinks, alinks;

static const char *link_lookup(dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < nlinks; i++)
		if (links[i].dev == dev && links[i].ino == ino)
			return links[i].path;
	return NULL;
}

static void link_add(dev_t dev, ino_t ino, const char *path)
{
	if (nlinks == alinks) {
		alinks = alinks ? alinks * 2 : 64;
		links = xrealloc(links, alinks * sizeof(*links));
	}
	links[nlinks].dev = dev;
	links[nlinks].ino = ino;
	links[nlinks].path = strdup(path);
	if (!links[nlinks].path)
		die("out of memory");
	nlinks++;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_extents(FILE *out, int dirfd, const char *name,
			  const char *path, off_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	off_t pos = 0;
	int any = 0;

	if (fd < 0)
		die("open %s: %s", path, strerror(errno));
	while (pos < size) {
		off_t d = lseek(fd, pos, SEEK_DATA);
		off_t h;

		if (d < 0) {
			if (errno == ENXIO)
				break;
			if (errno == EINVAL && pos == 0) {
				/* no SEEK_DATA support: all data */
				d = 0;
				h = size;
				goto emit;
			}
			die("SEEK_DATA %s: %s", path, strerror(errno));
		}
		if (d >= size)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			die("SEEK_HOLE %s: %s", path, strerror(errno));
		if (h > size)
			h = size;
emit:
		fprintf(out, "%s%lld+%lld", any ? "," : "", (long long)d,
			(long long)(h - d));
		any = 1;
		pos = h;
	}
	if (!any)
		fputs("-", out);
	close(fd);
}

/* ext2's name index of an attribute and the name without its prefix */
static int xattr_index(const char *name, const char **suffix)
{
	static const struct {
		const char *prefix;
		int index;
	} map[] = {
		{ "user.", 1 }, { "trusted.", 4 }, { "security.", 6 },
	};

	*suffix = "";
	if (!strcmp(name, "system.posix_acl_access"))
		return 2;
	if (!strcmp(name, "system.posix_acl_default"))
		return 3;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t pl = strlen(map[i].prefix);

		if (!strncmp(name, map[i].prefix, pl)) {
			*suffix = name + pl;
			return map[i].index;
		}
	}
	*suffix = name;
	return 0;
}

static int cmp_xattr(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b, *xs, *ys;
	int xi = xattr_index(x, &xs), yi = xattr_index(y, &ys);
	size_t xl = strlen(xs), yl = strlen(ys);

	if (xi != yi)
		return xi - yi;
	if (xl != yl)
		return xl < yl ? -1 : 1;
	return memcmp(xs, ys, xl);
}

static void print_xattrs(FILE *out, int dirfd, const char *name,
			 const char *path)
{
	char proc[64 + PATH_MAX];
	char *list, **names = NULL;
	ssize_t len;
	size_t n = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d/%s", dirfd, name);
	len = llistxattr(proc, NULL, 0);
	if (len < 0 && (errno == ENOTSUP || errno == ENODATA))
		return;
	if (len < 0)
		die("listxattr %s: %s", path, strerror(errno));
	list = xmalloc((size_t)len + 1);
	len = llistxattr(proc, list, (size_t)len);
	if (len < 0)
		die("listxattr %s: %s", path, strerror(errno));
	for (char *p = list; p < list + len; p += strlen(p) + 1) {
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = p;
	}
	qsort(names, n, sizeof(*names), cmp_xattr);
	for (size_t i = 0; i < n; i++) {
		ssize_t vlen = lgetxattr(proc, names[i], NULL, 0);
		unsigned char *v;

		if (vlen < 0)
			die("getxattr %s %s: %s", path, names[i], strerror(errno));
		v = xmalloc((size_t)vlen);
		vlen = lgetxattr(proc, names[i], v, (size_t)vlen);
		if (vlen < 0)
			die("getxattr %s %s: %s", path, names[i], strerror(errno));
		fputs("x ", out);
		put_escaped(out, names[i]);
		fputc(' ', out);
		for (ssize_t k = 0; k < vlen; k++)
			fprintf(out, "%02x", v[k]);
		fputs(vlen ? "\n" : "-\n", out);
		free(v);
	}
	free(names);
	free(list);
}

static void walk(FILE *out, int dirfd, const char *rel)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, a = 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd)))
		die("opendir %s: %s", *rel ? rel : ".", strerror(errno));
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == a) {
			a = a ? a * 2 : 32;
			names = xrealloc(names, a * sizeof(*names));
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			die("out of memory");
		n++;
	}
	if (errno)
		die("readdir %s: %s", rel, strerror(errno));
	qsort(names, n, sizeof(*names), cmp_names);

	for (size_t i = 0; i < n; i++) {
		struct stat st;
		size_t plen = strlen(rel) + strlen(names[i]) + 2;
		char *path = xmalloc(plen);
		unsigned mode;

		if (*rel)
			snprintf(path, plen, "%s/%s", rel, names[i]);
		else
			snprintf(path, plen, "%s", names[i]);
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			die("stat %s: %s", path, strerror(errno));
		mode = st.st_mode & 07777;

		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
			const char *old = link_lookup(st.st_dev, st.st_ino);

			if (old) {
				fputs("h ", out);
				put_escaped(out, path);
				fputc(' ', out);
				put_escaped(out, old);
				fputc('\n', out);
				free(path);
				free(names[i]);
				continue;
			}
			link_add(st.st_dev, st.st_ino, path);
		}

		if (S_ISDIR(st.st_mode)) {
			int sub;

			fprintf(out, "d %04o %u %u ", mode, (unsigned)st.st_uid,
				(unsigned)st.st_gid);
			put_escaped(out, path);
			fputc('\n', out);
			print_xattrs(out, dirfd, names[i], path);
			sub = openat(dirfd, names[i],
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				die("open %s: %s", path, strerror(errno));
			walk(out, sub, path);
			close(sub);
		} else if (S_ISREG(st.st_mode)) {
			fprintf(out, "f %04o %u %u %lld ", mode,
				(unsigned)st.st_uid, (unsigned)st.st_gid,
				(long long)st.st_size);
			put_escaped(out, path);
			fputc(' ', out);
			print_extents(out, dirfd, names[i], path, st.st_size);
			fputc('\n', out);
			print_xattrs(out, dirfd, names[i], path);
		} else if (S_ISLNK(st.st_mode)) {
			char *target = xmalloc(st.st_size + PATH_MAX + 1);
			ssize_t len = readlinkat(dirfd, names[i], target,
						 st.st_size + PATH_MAX);

			if (len < 0)
				die("readlink %s: %s", path, strerror(errno));
			target[len] = 0;
			fprintf(out, "l %u %u ", (unsigned)st.st_uid,
				(unsigned)st.st_gid);
			put_escaped(out, path);
			fputc(' ', out);
			put_escaped(out, target);
			fputc('\n', out);
			print_xattrs(out, dirfd, names[i], path);
			free(target);
		} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			fprintf(out, "%c %04o %u %u %u %u ",
				S_ISCHR(st.st_mode) ? 'c' : 'b', mode,
				(unsigned)st.st_uid, (unsigned)st.st_gid,
				major(st.st_rdev), minor(st.st_rdev));
			put_escaped(out, path);
			fputc('\n', out);
			print_xattrs(out, dirfd, names[i], path);
		} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
			fprintf(out, "%c %04o %u %u ",
				S_ISFIFO(st.st_mode) ? 'p' : 's', mode,
				(unsigned)st.st_uid, (unsigned)st.st_gid);
			put_escaped(out, path);
			fputc('\n', out);
			print_xattrs(out, dirfd, names[i], path);
		} else {
			die("%s: unsupported file type 0%o", path,
			    (unsigned)(st.st_mode & S_IFMT));
		}
		free(path);
		free(names[i]);
	}
	free(names);
	closedir(d);
}

static int do_manifest(const char *src)
{
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		die("open %s: %s", src, strerror(errno));
	walk(stdout, fd, "");
	close(fd);
	if (fflush(stdout) || ferror(stdout))
		die("write error on stdout");
	return 0;
}

/* ------------------------------------------------------------------- run */

static unsigned long parse_num(const char *s, int base, const char *what,
			       unsigned long lineno)
{
	char *end;
	unsigned long long v;

	if (!s)
		die("manifest line %lu: missing %s", lineno, what);
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || end == s)
		die("manifest line %lu: bad %s '%s'", lineno, what, s);
	return (unsigned long)v;
}

static void xchown_chmod(int destfd, const char *path, unsigned mode,
			 unsigned uid, unsigned gid)
{
	if (fchownat(destfd, path, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		die("chown %s: %s", path, strerror(errno));
	if (fchmodat(destfd, path, mode, 0) < 0)
		die("chmod %s: %s", path, strerror(errno));
}

static void drop_acl(const char *path, int fd, const char *name)
{
	int r = fd >= 0 ? fremovexattr(fd, name) : lremovexattr(path, name);

	/* nothing inherited, or no ACL support: nothing to drop */
	if (r < 0 && errno != ENODATA && errno != EOPNOTSUPP)
		die("removexattr %s %s: %s", path, name, strerror(errno));
}

/* The ACLs an entry inherited but its source lacks go; then the close. */
static void finish_entry(const char *path, int fd, int kind, int had_acl,
			 int had_default)
{
	if (path && kind != 'l' && kind != 'h') {
		if (!had_acl)
			drop_acl(path, fd, "system.posix_acl_access");
		if (kind == 'd' && !had_default)
			drop_acl(path, fd, "system.posix_acl_default");
	}
	if (fd >= 0 && close(fd) < 0)
		die("close %s: %s", path, strerror(errno));
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Returns the file still open: its attributes are set before the close. */
static int copy_file(int destfd, int payfd, const char *path, unsigned mode,
		      unsigned uid, unsigned gid, off_t size, char *extents,
		      char *buf)
{
	int out = openat(destfd, path, O_CREAT | O_WRONLY | O_EXCL | O_CLOEXEC,
			 mode & 0777);
	int in = -1;
	off_t end = 0;

	if (out < 0)
		die("create %s: %s", path, strerror(errno));
	if (strcmp(extents, "-")) {
		in = openat(payfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (in < 0)
			die("open payload %s: %s", path, strerror(errno));
	}
	for (char *e = strtok(extents, ","); in >= 0 && e; e = strtok(NULL, ",")) {
		char *plus = strchr(e, '+');
		long long off, len;

		if (!plus)
			die("%s: bad extent '%s'", path, e);
		*plus = 0;
		off = strtoll(e, NULL, 10);
		len = strtoll(plus + 1, NULL, 10);
		if (off < 0 || len <= 0)
			die("%s: bad extent %lld+%lld", path, off, len);
		if (lseek(out, off, SEEK_SET) != off)
			die("lseek %s: %s", path, strerror(errno));
		while (len > 0) {
			/* write() calls end on CHUNK (so page) boundaries:
			 * ext4 sizes block requests by the i_size each
			 * page's write leaves, and the tool models pages */
			size_t want = CHUNK - (size_t)(off % CHUNK) < (size_t)len ?
				      CHUNK - (size_t)(off % CHUNK) : (size_t)len;
			ssize_t r = pread(in, buf, want, off);
			size_t done = 0;

			if (r < 0)
				die("read payload %s: %s", path, strerror(errno));
			if ((size_t)r != want)
				die("payload %s shorter than manifest", path);
			while (done < want) {
				ssize_t w = write(out, buf + done, want - done);

				if (w < 0)
					die("write %s: %s", path, strerror(errno));
				done += w;
			}
			off += want;
			len -= want;
		}
		end = off;
	}
	if (end < size && ftruncate(out, size) < 0)
		die("ftruncate %s: %s", path, strerror(errno));
	if (in >= 0)
		close(in);
	if (fchown(out, uid, gid) < 0)
		die("chown %s: %s", path, strerror(errno));
	if (fchmod(out, mode) < 0)
		die("chmod %s: %s", path, strerror(errno));
	return out;
}

static int hexbytes(char *s, size_t *len)
{
	size_t n = strlen(s), i;

	if (!strcmp(s, "-")) {
		*len = 0;
		return 0;
	}
	if (n % 2)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int h = hexval(s[2 * i]), l = hexval(s[2 * i + 1]);

		if (h < 0 || l < 0)
			return -1;
		s[i] = (char)(h * 16 + l);
	}
	*len = n / 2;
	return 0;
}

static int is_dir(int dirfd, const char *path)
{
	struct stat st;

	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL 0x40000000
#endif

struct run_opts {
	int merge;
	char **casefold;	/* --casefold=PATH, manifest paths */
	int ncasefold;
};

/* chattr +F on the directory @p just made, when --casefold names it. */
static void set_casefold(int destfd, const char *p, const struct run_opts *ro)
{
	int i, fd, flags;

	for (i = 0; i < ro->ncasefold && strcmp(ro->casefold[i], p); i++)
		;
	if (i == ro->ncasefold)
		return;
	fd = openat(destfd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		die("casefold %s: %s", p, strerror(errno));
	flags |= FS_CASEFOLD_FL;
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags) < 0)
		die("casefold %s: %s", p, strerror(errno));
	close(fd);
}

/* @ro->merge: a directory that exists already is gone into (mkdir's
 * EEXIST ignored, then its mode and owner set), as cp -a does. */
static void replay(const char *manifest, const char *payload, const char *dest,
		   const struct run_opts *ro)
{
	FILE *m = fopen(manifest, "re");
	int destfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int payfd = open(payload, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *line = NULL, *buf = xmalloc(CHUNK);
	size_t cap = 0;
	ssize_t len;
	unsigned long lineno = 0;
	int open_fd = -1;	/* the last regular file, until its attributes are set */
	char *last = NULL;	/* DEST/PATH of the last entry made, for lsetxattr */
	int kind = 0;		/* its manifest type */
	int had_acl = 0, had_default = 0;	/* its x lines set these */

	if (!m)
		die("open %s: %s", manifest, strerror(errno));
	if (destfd < 0)
		die("open %s: %s", dest, strerror(errno));
	if (payfd < 0)
		die("open %s: %s", payload, strerror(errno));
	umask(0);

	while ((len = getline(&line, &cap, m)) >= 0) {
		char *f[8], *sp;
		int nf = 0;

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (!len)
			continue;
		for (char *t = strtok_r(line, " ", &sp); t && nf < 8;
		     t = strtok_r(NULL, " ", &sp))
			f[nf++] = t;
		for (int i = nf; i < 8; i++)
			f[i] = NULL;
		if (strlen(f[0]) != 1)
			die("manifest line %lu: bad type '%s'", lineno, f[0]);
		if (f[0][0] != 'x') {
			finish_entry(last, open_fd, kind, had_acl, had_default);
			open_fd = -1;
			free(last);
			last = NULL;
			kind = f[0][0];
			had_acl = had_default = 0;
		}

		switch (f[0][0]) {
		case 'd': {
			unsigned mode = parse_num(f[1], 8, "mode", lineno);
			unsigned uid = parse_num(f[2], 10, "uid", lineno);
			unsigned gid = parse_num(f[3], 10, "gid", lineno);
			char *p;

			if (!f[4])
				die("manifest line %lu: missing path", lineno);
			p = unescape(f[4]);
			if (mkdirat(destfd, p, mode & 0777) == 0)
				set_casefold(destfd, p, ro);
			else if (!(ro->merge && errno == EEXIST &&
				   is_dir(destfd, p)))
				die("mkdir %s: %s", p, strerror(errno));
			xchown_chmod(destfd, p, mode, uid, gid);
			last = join(dest, p);
			break;
		}
		case 'f': {
			unsigned mode = parse_num(f[1], 8, "mode", lineno);
			unsigned uid = parse_num(f[2], 10, "uid", lineno);
			unsigned gid = parse_num(f[3], 10, "gid", lineno);
			off_t size = parse_num(f[4], 10, "size", lineno);

			if (!f[5] || !f[6])
				die("manifest line %lu: missing field", lineno);
			open_fd = copy_file(destfd, payfd, unescape(f[5]), mode,
					    uid, gid, size, f[6], buf);
			last = join(dest, f[5]);
			break;
		}
		case 'l': {
			unsigned uid = parse_num(f[1], 10, "uid", lineno);
			unsigned gid = parse_num(f[2], 10, "gid", lineno);
			char *p, *t;

			if (!f[3] || !f[4])
				die("manifest line %lu: missing field", lineno);
			p = unescape(f[3]);
			t = unescape(f[4]);
			if (symlinkat(t, destfd, p) < 0)
				die("symlink %s: %s", p, strerror(errno));
			if (fchownat(destfd, p, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
				die("lchown %s: %s", p, strerror(errno));
			last = join(dest, p);
			break;
		}
		case 'h': {
			char *p, *o;

			if (!f[1] || !f[2])
				die("manifest line %lu: missing field", lineno);
			p = unescape(f[1]);
			o = unescape(f[2]);
			if (linkat(destfd, o, destfd, p, 0) < 0)
				die("link %s -> %s: %s", p, o, strerror(errno));
			break;
		}
		case 'c':
		case 'b':
		case 'p':
		case 's': {
			/* devices carry MAJOR MINOR before the path */
			int dev = f[0][0] == 'c' || f[0][0] == 'b';
			unsigned mode = parse_num(f[1], 8, "mode", lineno);
			unsigned uid = parse_num(f[2], 10, "uid", lineno);
			unsigned gid = parse_num(f[3], 10, "gid", lineno);
			dev_t rdev = 0;
			mode_t type;
			char *p;

			if (dev)
				rdev = makedev(parse_num(f[4], 10, "major", lineno),
					       parse_num(f[5], 10, "minor", lineno));
			if (!f[dev ? 6 : 4])
				die("manifest line %lu: missing path", lineno);
			p = unescape(f[dev ? 6 : 4]);
			type = f[0][0] == 'c' ? S_IFCHR : f[0][0] == 'b' ? S_IFBLK :
			       f[0][0] == 'p' ? S_IFIFO : S_IFSOCK;
			if (mknodat(destfd, p, type | (mode & 0777), rdev) < 0)
				die("mknod %s: %s", p, strerror(errno));
			xchown_chmod(destfd, p, mode, uid, gid);
			last = join(dest, p);
			break;
		}
		case 'x': {
			size_t vlen;
			char *name;
			int r;

			if (!f[1] || !f[2] || hexbytes(f[2], &vlen))
				die("manifest line %lu: bad attribute", lineno);
			if (!last)
				die("manifest line %lu: attribute of nothing", lineno);
			name = unescape(f[1]);
			had_acl |= !strcmp(name, "system.posix_acl_access");
			had_default |= !strcmp(name, "system.posix_acl_default");
			r = open_fd >= 0 ? fsetxattr(open_fd, name, f[2], vlen, 0) :
			    lsetxattr(last, name, f[2], vlen, 0);
			if (r < 0)
				die("setxattr %s %s: %s", last, name, strerror(errno));
			break;
		}
		default:
			die("manifest line %lu: bad type '%s'", lineno, f[0]);
		}
	}
	finish_entry(last, open_fd, kind, had_acl, had_default);
	free(last);
	if (ferror(m))
		die("read %s: %s", manifest, strerror(errno));
	fclose(m);
	free(line);
	free(buf);
	close(destfd);
	close(payfd);
}

/*
 * ext2 colours the block goal of a new file by current->pid % 16: become a
 * process with the wanted colour.  The parent forks until a child has it,
 * waits for that child and exits with its status.
 */
static void become_colour(int colour)
{
	for (int tries = 0; getpid() % 16 != colour; tries++) {
		pid_t c;
		int st;

		if (tries > 4096)
			die("could not get a pid with colour %d", colour);
		c = fork();
		if (c < 0)
			die("fork: %s", strerror(errno));
		if (c == 0) {
			if (getpid() % 16 == colour)
				return; /* this child does the work */
			_exit(0);
		}
		if (waitpid(c, &st, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (c % 16 != colour) {
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				die("colour probe child failed");
			continue;
		}
		if (WIFEXITED(st))
			exit(WEXITSTATUS(st));
		exit(128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0));
	}
}

/* Run on CPU @cpu only, from now on, with every child forked later. */
static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		die("sched_setaffinity to CPU %d: %s", cpu, strerror(errno));
	/* the migration happens before the call returns */
	if (sched_getcpu() != cpu)
		die("still running on CPU %d, not %d", sched_getcpu(), cpu);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: replay manifest SRC\n"
		"       replay run [--colour N] [--cpu C] [--merge] [--casefold=PATH]...\n"
		"                  MANIFEST PAYLOAD DEST\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "manifest")) {
		if (argc != 3)
			usage();
		return do_manifest(argv[2]);
	}
	if (!strcmp(argv[1], "run")) {
		int colour = 0, cpu = -1, i = 2;
		struct run_opts ro = { .casefold = xmalloc(argc * sizeof(char *)) };

		while (i + 1 < argc && argv[i][0] == '-') {
			if (!strcmp(argv[i], "--merge")) {
				ro.merge = 1;
				i++;
				continue;
			}
			if (!strncmp(argv[i], "--casefold=", 11)) {
				ro.casefold[ro.ncasefold++] = argv[i] + 11;
				i++;
				continue;
			}
			if (!strcmp(argv[i], "--colour") ||
			    !strcmp(argv[i], "--color")) {
				colour = (int)parse_num(argv[i + 1], 10, "colour", 0);
				if (colour > 15)
					die("colour must be 0..15");
			} else if (!strcmp(argv[i], "--cpu")) {
				cpu = (int)parse_num(argv[i + 1], 10, "cpu", 0);
				if (cpu >= CPU_SETSIZE)
					die("cpu must be below %d", CPU_SETSIZE);
			} else {
				usage();
			}
			i += 2;
		}
		if (argc - i != 3)
			usage();
		if (cpu >= 0)
			pin_cpu(cpu);
		become_colour(colour);
		replay(argv[i], argv[i + 1], argv[i + 2], &ro);
		return 0;
	}
	usage();
	return 2;
}
