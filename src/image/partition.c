// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The filesystem's place in a disk image: the partition table read with
 * libblkid's partition probing (GPT and MBR, logical partitions too),
 * the partition picked by number, GPT name or PARTUUID.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <ext2fs/ext2fs.h>

#include "image/image_int.h"
#include "image/io_guard.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* The image's bytes: a file's size, a device's. */
static errcode_t image_bytes(const char *path, uint64_t *bytes)
{
	blk64_t n;
	errcode_t err = ext2fs_get_device_size2(path, 512, &n);

	*bytes = (uint64_t)n * 512;
	return err;
}

/* Does partition @par answer to @sel (its number, GPT name, PARTUUID)? */
static int partition_is(blkid_partition par, const char *sel)
{
	const char *name = blkid_partition_get_name(par);
	const char *uuid = blkid_partition_get_uuid(par);

	if (sel[strspn(sel, "0123456789")] == '\0')
		return (long long)blkid_partition_get_partno(par) == atoll(sel);
	return (name && !strcmp(name, sel)) ||
	       (uuid && !strcasecmp(uuid, sel));
}

/* An MBR extended partition holds the chain of extended boot records:
 * a filesystem there would wipe the logical partitions' tables. */
static int is_extended(blkid_partition par)
{
	int type = blkid_partition_get_type(par);

	return blkid_partition_is_extended(par) || type == 0x05 ||
	       type == 0x0f || type == 0x85;
}

/* Bytes [a, a + n) and [b, b + m) share one? */
static int overlaps(uint64_t a, uint64_t n, uint64_t b, uint64_t m)
{
	return a < b + m && b < a + n;
}

/*
 * The partition @t (found as @r) may be written only inside the disk and
 * away from what else the table describes: not an extended partition,
 * not over the MBR's sector (a GPT's header and entries lie outside its
 * usable area, where libblkid lists no partition), not over another
 * partition (a logical one lies inside its extended one by design), not
 * past the end of the disk (a file would grow, a device refuse late).
 */
static errcode_t check_partition(blkid_partlist ls, blkid_partition t,
				 const struct image_region *r, uint64_t disk)
{
	int i, n = blkid_partlist_numof_partitions(ls);

	if (is_extended(t))
		return ORLOV_ERR_PART_EXTENDED;
	if (r->offset < 512)
		return ORLOV_ERR_PART_OVER_TABLE;
	if (r->offset + r->size > disk || r->offset + r->size < r->offset)
		return ORLOV_ERR_PART_PAST_END;
	for (i = 0; i < n; i++) {
		blkid_partition p = blkid_partlist_get_partition(ls, i);

		if (!p || p == t ||
		    (is_extended(p) && blkid_partition_is_logical(t)))
			continue;
		if (overlaps(r->offset, r->size,
			     (uint64_t)blkid_partition_get_start(p) * 512,
			     (uint64_t)blkid_partition_get_size(p) * 512))
			return ORLOV_ERR_PART_OVERLAP;
	}
	return 0;
}

static errcode_t find_partition(const char *path, const char *sel,
				struct image_region *r)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	blkid_partlist ls;
	errcode_t err = ORLOV_ERR_NO_PARTITION;
	int i, n;

	if (!pr)
		return errno ? (errcode_t)errno : ORLOV_ERR_NO_PART_TABLE;
	/* the table alone: a filesystem signature at the start of a disk
	 * (a protective MBR's neighbour) must not hide it */
	blkid_probe_enable_superblocks(pr, 0);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	ls = blkid_probe_get_partitions(pr);
	n = ls ? blkid_partlist_numof_partitions(ls) : -1;
	if (n < 0)
		err = ORLOV_ERR_NO_PART_TABLE;
	for (i = 0; i < n; i++) {
		blkid_partition par = blkid_partlist_get_partition(ls, i);

		if (!par || !partition_is(par, sel))
			continue;
		/* libblkid counts in 512-byte sectors whatever the disk's */
		r->offset = (uint64_t)blkid_partition_get_start(par) * 512;
		r->size = (uint64_t)blkid_partition_get_size(par) * 512;
		r->partno = (unsigned int)blkid_partition_get_partno(par);
		err = check_partition(ls, par, r,
				      (uint64_t)blkid_probe_get_size(pr));
		break;
	}
	blkid_free_probe(pr);
	return err;
}

errcode_t image_region_find(const char *path, const struct image_where *w,
			    struct image_region *r)
{
	uint64_t bytes;
	errcode_t err;

	memset(r, 0, sizeof(*r));
	if (w->partition)
		return find_partition(path, w->partition, r);
	r->offset = w->offset;
	if (!r->offset)
		return 0;
	/* a missing image is --create's to make (or the open's to report) */
	err = image_bytes(path, &bytes);
	if (err == ENOENT)
		return 0;
	if (err)
		return err;
	return r->offset >= bytes ? ORLOV_ERR_OFFSET_PAST_END : 0;
}

const char *image_region_io(const struct image_region *r, char *buf,
			    size_t size)
{
	if (!r || !r->offset)
		return NULL;
	snprintf(buf, size, "offset=%llu", (unsigned long long)r->offset);
	return buf;
}

char *image_region_name(const char *path, const struct image_region *r)
{
	char *s;
	size_t n;

	if (!r || !r->offset)
		return strdup(path);
	n = strlen(path) + 32;
	s = malloc(n);
	if (s)
		snprintf(s, n, "%s?offset=%llu", path,
			 (unsigned long long)r->offset);
	return s;
}

errcode_t image_region_fits(const struct image_region *r, uint64_t bytes)
{
	return r && r->size && bytes > r->size ? ORLOV_ERR_FS_PAST_PARTITION : 0;
}

/* The copy of a new image into its region. */
#define FILL_BUF (1U << 20)
#define FILL_SB 1024ULL		/* the primary superblock: [1024, 2048) */
struct fill {
	int to, from;		/* the disk, the new image */
	int reg;		/* the disk is a file: holes punched */
	uint64_t offset;	/* the region's first byte in the disk */
	uint64_t size;		/* the new image's bytes */
	unsigned char *buf;
	struct io_fault fault;	/* a test's fillkill:N or filleio:N */
	unsigned long ops;	/* writes into the disk so far */
};

errcode_t image_region_probe(const char *path, const struct image_region *r,
			     char *type, size_t n)
{
	blkid_probe pr = blkid_new_probe();
	const char *v = NULL;
	errcode_t err = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;

	type[0] = '\0';
	if (fd < 0 || !pr) {
		err = fd < 0 ? (errcode_t)errno : ENOMEM;
		goto out;
	}
	/* the region's own bytes only: the disk's table is no filesystem */
	if (blkid_probe_set_device(pr, fd, (blkid_loff_t)r->offset,
				   (blkid_loff_t)r->size)) {
		err = EIO;
		goto out;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0 && !blkid_probe_lookup_value(pr, "TYPE", &v, NULL) && v &&
	    strcmp(v, "ext2") && strcmp(v, "ext3") && strcmp(v, "ext4"))
		snprintf(type, n, "%s", v);
	/* two signatures: which one holds the data cannot be told */
	else if (rc == -2)
		snprintf(type, n, "several filesystem signatures");
out:
	if (pr)
		blkid_free_probe(pr);
	if (fd >= 0)
		close(fd);
	return err;
}

/* The zeros of a hole of the new image at @at of @to: a hole punched
 * into a file where the filesystem can, else written. */
static errcode_t put_zeros(int to, int reg, uint64_t at, uint64_t len,
			   unsigned char *buf)
{
	if (reg && !fallocate(to, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)at, (off_t)len))
		return 0;
	memset(buf, 0, FILL_BUF);
	while (len) {
		size_t k = len < FILL_BUF ? (size_t)len : FILL_BUF;
		errcode_t err = pwrite_all(to, buf, k, (off_t)at);

		if (err)
			return err;
		at += k;
		len -= k;
	}
	return 0;
}

/* Bytes [pos, pos + len) of @from to @at of @to. */
static errcode_t put_data(int to, int from, uint64_t pos, uint64_t at,
			  uint64_t len, unsigned char *buf)
{
	while (len) {
		size_t k = len < FILL_BUF ? (size_t)len : FILL_BUF;
		ssize_t got = pread(from, buf, k, (off_t)pos);
		errcode_t err;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? (errcode_t)errno : EIO;
		err = pwrite_all(to, buf, (size_t)got, (off_t)at);
		if (err)
			return err;
		pos += (uint64_t)got;
		at += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return 0;
}

static errcode_t put(struct fill *f, int data, uint64_t a, uint64_t b)
{
	/* the tests' kill or I/O error before write N of the copy */
	if (++f->ops == f->fault.at && f->fault.kind == IO_FAULT_FILL_KILL)
		raise(SIGKILL);
	if (f->ops == f->fault.at && f->fault.kind == IO_FAULT_FILL_EIO)
		return EIO;
	return data ? put_data(f->to, f->from, a, f->offset + a, b - a, f->buf) :
		      put_zeros(f->to, f->reg, f->offset + a, b - a, f->buf);
}

/* One range of the new image, data or hole, written at @f->offset; the
 * primary superblock's bytes held back (image_region_fill writes them
 * last). */
static errcode_t put_range(struct fill *f, int data, uint64_t a,
			   uint64_t b)
{
	uint64_t e = b < FILL_SB ? b : FILL_SB;
	uint64_t s = a > 2 * FILL_SB ? a : 2 * FILL_SB;
	errcode_t err = 0;

	if (a < e)
		err = put(f, data, a, e);
	if (!err && s < b)
		err = put(f, data, s, b);
	return err;
}

/*
 * The new image's ranges in order, each data or hole: with @reserve, the
 * data's room allocated in @f->to first (a full host filesystem stops
 * the run there, nothing written); else written.  Without SEEK_DATA,
 * all of it is data.
 */
static errcode_t fill_pass(struct fill *f, int reserve)
{
	uint64_t pos = 0, d, h;
	errcode_t err = 0;
	off_t o;

	while (!err && pos < f->size) {
		o = lseek(f->from, (off_t)pos, SEEK_DATA);
		d = o >= 0 ? (uint64_t)o : errno == ENXIO ? f->size : pos;
		o = d < f->size ? lseek(f->from, (off_t)d, SEEK_HOLE) : -1;
		h = o >= 0 && (uint64_t)o < f->size ? (uint64_t)o : f->size;
		if (reserve && h > d &&
		    fallocate(f->to, FALLOC_FL_KEEP_SIZE, (off_t)(f->offset + d),
			      (off_t)(h - d))) {
			/* a device, or a filesystem without it: nothing to
			 * reserve, or no way to */
			if (errno == EOPNOTSUPP || errno == ENOSYS ||
			    errno == ENODEV)
				return 0;
			return errno == ENOSPC || errno == EDQUOT ?
			       ORLOV_ERR_NO_HOST_SPACE : (errcode_t)errno;
		}
		if (!reserve && d > pos)
			err = put_range(f, 0, pos, d);
		if (!reserve && !err && h > d)
			err = put_range(f, 1, d, h);
		pos = h;
	}
	return err;
}

/* The new superblock's bytes (or zeros over the old one), synced. */
static errcode_t put_super(struct fill *f, int data)
{
	errcode_t err = 0;

	if (f->size > FILL_SB)
		err = put(f, data, FILL_SB, f->size < 2 * FILL_SB ? f->size :
							 2 * FILL_SB);
	if (!err && fdatasync(f->to))
		err = (errcode_t)errno;
	return err;
}

/*
 * The rollback file, .DISK.orlov-rb-INODE next to the disk image (not in
 * TMPDIR, which a reboot may clear): a header, then at RB_DATA + x the
 * old byte at offset + x of the disk, holes where the disk had holes.
 * Its name, given by its own inode (image_temp_create_tag), proves that
 * a run made it; its header, written and synced last, that it is whole:
 * the disk is written only after that.
 */
#define RB_TAG "rb-"
#define RB_KEPT (231 - 3)	/* shadow.c's NAME_KEPT less the tag */
#define RB_DATA 4096ULL
static const char rb_magic[8] = { 'O', 'R', 'L', 'O', 'V', 'R', 'B', '1' };

struct rb_head {
	char magic[8];
	uint64_t dev, ino;	/* the disk's */
	uint64_t offset;	/* the old bytes' place in the disk */
	uint64_t len;		/* their count: the copy's, up to the file's end */
	uint64_t size;		/* the disk file's size before (a device: 0) */
};

struct rollback {
	char *path;
	int fd;
};

/* The directory of @path on disk, as far as it can say: a name made or
 * removed stays so after a crash. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path + 1)) :
			    strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

/*
 * Bytes [pos, pos + len) of @from at @at of @to: the data extents copied
 * (with @reserve, only their room allocated); the holes, with @zeros,
 * punched or written as zeros, else skipped (a new file's are zeros).
 */
static errcode_t copy_extents(int from, uint64_t pos, int to, uint64_t at,
			      uint64_t len, int zeros, int reserve,
			      unsigned char *buf)
{
	uint64_t end = pos + len, base = pos, d, h;
	struct stat st;
	errcode_t err = 0;
	off_t o;

	if (fstat(to, &st))
		return (errcode_t)errno;
	while (!err && pos < end) {
		o = lseek(from, (off_t)pos, SEEK_DATA);
		d = o >= 0 ? ((uint64_t)o < end ? (uint64_t)o : end) :
		    errno == ENXIO ? end : pos;
		o = d < end ? lseek(from, (off_t)d, SEEK_HOLE) : -1;
		h = o >= 0 && (uint64_t)o < end ? (uint64_t)o : end;
		if (zeros && d > pos)
			err = put_zeros(to, S_ISREG(st.st_mode),
					at + (pos - base), d - pos, buf);
		if (!err && reserve && h > d &&
		    fallocate(to, 0, (off_t)(at + (d - base)), (off_t)(h - d)) &&
		    errno != EOPNOTSUPP && errno != ENOSYS)
			err = (errcode_t)errno;
		else if (!err && !reserve && h > d)
			err = put_data(to, from, d, at + (d - base), h - d, buf);
		pos = h;
	}
	return err;
}

static void rollback_drop(struct rollback *rb)
{
	if (rb->path) {
		unlink(rb->path);
		sync_dir(rb->path);
	}
	free(rb->path);
	rb->path = NULL;
}

static void rollback_close(struct rollback *rb)
{
	if (rb->fd >= 0)
		close(rb->fd);
	rb->fd = -1;
}

/* The old bytes the copy of @span bytes at @offset of @to will overwrite,
 * in a new rollback file, synced; its room reserved before anything is
 * written (a full host filesystem: ORLOV_ERR_ROLLBACK_SPACE, no file). */
static errcode_t rollback_save(const char *disk, int to, uint64_t offset,
			       uint64_t span, struct rollback *rb)
{
	struct rb_head h;
	enum temp_step step;
	struct stat st;
	unsigned char *buf = malloc(FILL_BUF);
	errcode_t err = buf ? 0 : ENOMEM;

	memset(&h, 0, sizeof(h));
	if (!err && fstat(to, &st))
		err = (errcode_t)errno;
	if (err)
		goto out;
	h.dev = st.st_dev;
	h.ino = st.st_ino;
	h.offset = offset;
	h.size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	h.len = !S_ISREG(st.st_mode) ? span : h.size <= offset ? 0 :
		h.size - offset < span ? h.size - offset : span;
	err = image_temp_create_tag(disk, RB_TAG, &st, 0, -1, &rb->path,
				    &rb->fd, &step);
	if (err)
		goto out;
	if (fallocate(rb->fd, 0, 0, (off_t)RB_DATA) && errno != EOPNOTSUPP &&
	    errno != ENOSYS)
		err = (errcode_t)errno;
	if (!err)
		err = copy_extents(to, offset, rb->fd, RB_DATA, h.len, 0, 1, buf);
	if (!err)
		err = copy_extents(to, offset, rb->fd, RB_DATA, h.len, 0, 0, buf);
	if (!err && fsync(rb->fd))
		err = (errcode_t)errno;
	memcpy(h.magic, rb_magic, sizeof(h.magic));
	if (!err)
		err = pwrite_all(rb->fd, &h, sizeof(h), 0);
	if (!err && fsync(rb->fd))
		err = (errcode_t)errno;
	if (!err)
		sync_dir(rb->path);
	if (err == ENOSPC || err == EDQUOT || err == EFBIG)
		err = ORLOV_ERR_ROLLBACK_SPACE;
	if (err) {
		rollback_drop(rb);
		rollback_close(rb);
	}
out:
	free(buf);
	return err;
}

/* The rollback file open as @fd (its header @h) put back into @to, the
 * disk's size as it was, synced. */
static errcode_t rollback_apply_head(int fd, const struct rb_head *h, int to)
{
	unsigned char *buf = malloc(FILL_BUF);
	errcode_t err = buf ? 0 : ENOMEM;
	struct stat st;

	if (!err)
		err = copy_extents(fd, RB_DATA, to, h->offset, h->len, 1, 0,
				   buf);
	if (!err && fstat(to, &st))
		err = (errcode_t)errno;
	if (!err && S_ISREG(st.st_mode) && (uint64_t)st.st_size != h->size &&
	    ftruncate(to, (off_t)h->size))
		err = (errcode_t)errno;
	if (!err && fsync(to))
		err = (errcode_t)errno;
	free(buf);
	return err;
}

/* The rollback file's header, if it is whole. */
static int rollback_head(int fd, struct rb_head *h)
{
	return pread(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) &&
	       !memcmp(h->magic, rb_magic, sizeof(h->magic));
}

static errcode_t rollback_apply(int fd, int to)
{
	struct rb_head h;

	return rollback_head(fd, &h) ? rollback_apply_head(fd, &h, to) :
				       ORLOV_ERR_ROLLBACK_PENDING;
}

/* Is @n the name of a rollback file of the disk image named @base?  Its
 * INODE in *ino. */
static int rollback_name(const char *n, const char *base, unsigned long long *ino)
{
	size_t bl = strlen(base) < RB_KEPT ? strlen(base) : RB_KEPT;
	const char *hex = n + 1 + bl + 7 + strlen(RB_TAG);

	if (strlen(n) != (size_t)(hex - n) + 16 || n[0] != '.' ||
	    strncmp(n + 1, base, bl) || strncmp(n + 1 + bl, ".orlov-" RB_TAG,
						  7 + strlen(RB_TAG)) ||
	    strspn(hex, "0123456789abcdef") != 16)
		return 0;
	*ino = strtoull(hex, NULL, 16);
	return 1;
}

/* The rollback file @n (open as @fd, flocked) of the disk @disk (@ds):
 * put back with @apply and removed, else ORLOV_ERR_ROLLBACK_PENDING; one
 * not whole (killed before the disk's first write) removed. */
static errcode_t rollback_found(DIR *d, const char *n, int fd,
				const char *disk, const struct stat *ds,
				int apply, unsigned int *applied)
{
	struct rb_head h;
	errcode_t err = 0;
	int to;

	if (!rollback_head(fd, &h)) {
		if (apply)
			unlinkat(dirfd(d), n, 0);
		return 0;
	}
	if (h.dev != (uint64_t)ds->st_dev || h.ino != (uint64_t)ds->st_ino)
		return 0;	/* another disk's, of a name as long */
	if (!apply)
		return ORLOV_ERR_ROLLBACK_PENDING;
	to = open(disk, O_RDWR | O_CLOEXEC);
	err = to < 0 ? (errcode_t)errno : rollback_apply_head(fd, &h, to);
	if (to >= 0)
		close(to);
	if (!err && unlinkat(dirfd(d), n, 0))
		err = (errcode_t)errno;
	if (!err) {
		fsync(dirfd(d));
		if (applied)
			(*applied)++;
	}
	return err;
}

errcode_t image_rollback_pending(const char *path, int apply,
				 unsigned int *applied)
{
	char *disk = NULL, *dir;
	const char *base;
	struct dirent *de;
	struct stat ds, a;
	errcode_t err = image_resolve(path, &disk);
	DIR *d = NULL;

	if (err || stat(disk, &ds)) {
		free(disk);
		return err;	/* no disk: nothing to put back */
	}
	base = strrchr(disk, '/');
	dir = base ? strndup(disk, (size_t)(base - disk + 1)) : strdup(".");
	base = base ? base + 1 : disk;
	d = dir ? opendir(dir) : NULL;
	while (!err && d && (de = readdir(d)) != NULL) {
		unsigned long long ino;
		int fd;

		if (!rollback_name(de->d_name, base, &ino))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW |
			    O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* made by a run (named for its inode), and no live run's */
		if (!fstat(fd, &a) && S_ISREG(a.st_mode) && a.st_ino == ino &&
		    a.st_nlink == 1 && !flock(fd, LOCK_EX | LOCK_NB))
			err = rollback_found(d, de->d_name, fd, disk, &ds,
					     apply, applied);
		close(fd);
	}
	if (d)
		closedir(d);
	free(dir);
	free(disk);
	return err;
}

/* The new image's bytes in the disk, the old superblock zeroed first and
 * the new one written last. */
static errcode_t fill_write(struct fill *f, uint64_t size_before)
{
	errcode_t err = put_super(f, 0);

	if (!err)
		err = fill_pass(f, 0);
	if (!err && fdatasync(f->to))
		err = (errcode_t)errno;
	if (!err)
		err = put_super(f, 1);
	/* --offset: a hole at the end of a filesystem past the file's end */
	if (!err && f->reg && size_before < f->offset + f->size &&
	    ftruncate(f->to, (off_t)(f->offset + f->size)))
		err = (errcode_t)errno;
	if (!err && fdatasync(f->to))
		err = (errcode_t)errno;
	return err;
}

/*
 * Room first, in the disk and for the rollback file, where the old bytes
 * of all the copy overwrites are kept (synced) before the first write:
 * a run that fails while it writes puts them back; one killed leaves the
 * file, which the next run applies (image_rollback_pending).  The file
 * goes once the new image is synced.
 */
errcode_t image_region_fill(const char *disk, int to, const char *from,
			    uint64_t offset, const char *fault)
{
	struct fill f = { .to = to, .offset = offset };
	struct rollback rb = { .fd = -1 };
	struct stat st, dst;
	char *real = NULL;
	errcode_t err = io_guard_parse(fault, &f.fault);

	f.from = open(from, O_RDONLY | O_CLOEXEC);
	f.buf = malloc(FILL_BUF);
	if (!err && (f.from < 0 || !f.buf || fstat(f.from, &st) ||
		     fstat(to, &dst)))
		err = !f.buf ? ENOMEM : (errcode_t)errno;
	if (err)
		goto out;
	f.size = (uint64_t)st.st_size;
	f.reg = S_ISREG(dst.st_mode);
	err = fill_pass(&f, 1);
	if (!err)
		err = image_resolve(disk, &real);
	if (!err)
		err = rollback_save(real, to, offset, f.size, &rb);
	if (!err)
		err = fill_write(&f, (uint64_t)dst.st_size);
	/* put back, the file kept if that fails too: the next run's */
	if (err && rb.fd >= 0 && !rollback_apply(rb.fd, to))
		rollback_drop(&rb);
	else if (!err)
		rollback_drop(&rb);
	rollback_close(&rb);
out:
	free(real);
	free(f.buf);
	if (f.from >= 0)
		close(f.from);
	return err;
}
