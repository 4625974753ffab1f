// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/capture.h"
#include "image/io_guard.h"
#include "lib/keymap.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

struct saved {
	unsigned long long off;	/* byte offset of the region */
	unsigned int len;
	unsigned char *data;	/* NULL: the region was all zeros */
};

/* A range of the image file that was a hole before this run wrote it. */
struct hole {
	off_t off, len;
	int zeros;	/* data of zeros: written again, not punched */
};

/* io_guard_track_holes: what the run allocated in the image file. */
struct holes {
	int fd;			/* the image file (not ours); -1: untracked */
	unsigned long long base;	/* file offset of the channel's byte 0 */
	off_t size;		/* the file's size before the run */
	off_t unit;		/* the host's allocation unit */
	unsigned char *buf;	/* ZBUF bytes, for zeros_at */
	struct hole *h;
	size_t n, cap;
};

struct guard {
	io_channel real;
	struct io_fault fault;
	unsigned long ops;	/* writes, byte writes and flushes so far */
	unsigned long reads;	/* block reads so far (numbered apart) */
	unsigned long begun;	/* ops before io_guard_begin */
	int saving;
	struct saved *saved;
	size_t n, cap;
	struct keymap saved_at;	/* offsets in saved */
	/* capture: writes held back, block by block, for a journal */
	int capturing;
	struct io_capture *capt;	/* NULL until the first captured write */
	size_t cap_budget;	/* bytes of it in memory (0: its default) */
	int whole_super;	/* io_guard_whole_super */
	struct holes holes;	/* io_guard_track_holes */
	int behind_fd;		/* io_guard_write_behind; -1: none */
	unsigned long long unkicked;	/* bytes written since the last kick */
};

errcode_t io_guard_parse(const char *spec, struct io_fault *f)
{
	static const struct { const char *name; enum io_fault_kind kind; } k[] = {
		{ "kill:", IO_FAULT_KILL }, { "eio:", IO_FAULT_EIO },
		{ "enospc:", IO_FAULT_ENOSPC }, { "eioread:", IO_FAULT_EIO_READ },
		{ "fillkill:", IO_FAULT_FILL_KILL },
		{ "filleio:", IO_FAULT_FILL_EIO },
	};
	size_t i;

	memset(f, 0, sizeof(*f));
	if (!spec || !*spec)
		return 0;
	if (!strcmp(spec, "count")) {
		f->kind = IO_FAULT_COUNT;
		return 0;
	}
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		size_t n = strlen(k[i].name);
		char *end;

		if (strncmp(spec, k[i].name, n))
			continue;
		errno = 0;
		f->at = strtoul(spec + n, &end, 10);
		if (errno || *end || end == spec + n || !f->at)
			return ORLOV_ERR_USAGE;
		f->kind = k[i].kind;
		return 0;
	}
	return ORLOV_ERR_USAGE;
}

static struct guard *guard_of(io_channel ch)
{
	return ch->private_data;
}

/* One more operation: the injected fault, if this is its number. */
static errcode_t tick(struct guard *g)
{
	g->ops++;
	if (g->fault.at != g->ops)
		return 0;
	switch (g->fault.kind) {
	case IO_FAULT_KILL:
		/* as kill -9: nothing cached in this process reaches the disk */
		raise(SIGKILL);
		return EINTR;
	case IO_FAULT_EIO:
		return EIO;
	case IO_FAULT_ENOSPC:
		return ENOSPC;
	default:
		return 0;
	}
}

errcode_t io_guard_tick(io_channel ch)
{
	return tick(guard_of(ch));
}

static int is_saved(const struct guard *g, unsigned long long off)
{
	return keymap_get(&g->saved_at, off, NULL);
}

static errcode_t mark_saved(struct guard *g, unsigned long long off)
{
	return keymap_add(&g->saved_at, off, 0);
}

static int all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Block @b's old contents @old, kept (NULL when all zeros: most of what a
 * fresh image's commit overwrites, its inode tables). */
static errcode_t save_block(struct guard *g, unsigned long long b,
			    unsigned long long bs, const unsigned char *old)
{
	unsigned char *buf = NULL;
	struct saved *s;

	if (grow_array(&g->saved, &g->cap, g->n + 1, sizeof(*g->saved), 256))
		return ENOMEM;
	if (!all_zero(old, (size_t)bs)) {
		buf = malloc((size_t)bs);
		if (!buf)
			return ENOMEM;
		memcpy(buf, old, (size_t)bs);
	}
	if (mark_saved(g, b * bs)) {
		free(buf);
		return ENOMEM;
	}
	s = &g->saved[g->n++];
	s->off = b * bs;
	s->len = (unsigned int)bs;
	s->data = buf;
	return 0;
}

/* Blocks read with one call (the channel's cache is off: a read is a
 * system call, and a commit overwrites long runs). */
#define SAVE_RUN 256

/* Save the channel blocks under [off, off + len) not saved yet. */
static errcode_t save_range(io_channel ch, unsigned long long off,
			    unsigned long long len)
{
	struct guard *g = guard_of(ch);
	unsigned long long bs = (unsigned long long)ch->block_size;
	unsigned long long b, n, k, last, most;
	unsigned char *run = NULL;
	errcode_t err = 0;

	if (!g->saving || !len)
		return 0;
	last = (off + len - 1) / bs;
	/* the longest run this range can hold: a one-block write reads
	 * one block into one block's room */
	most = last - off / bs + 1 < SAVE_RUN ? last - off / bs + 1 : SAVE_RUN;
	for (b = off / bs; !err && b <= last; b += n) {
		n = 1;
		if (is_saved(g, b * bs))
			continue;
		while (n < most && b + n <= last && !is_saved(g, (b + n) * bs))
			n++;
		if (!run && !(run = malloc((size_t)(most * bs))))
			return ENOMEM;
		err = io_channel_read_blk64(g->real, b, (int)n, run);
		for (k = 0; !err && k < n; k++)
			err = save_block(g, b + k, bs, run + k * bs);
	}
	free(run);
	return err;
}

/* Remember [off, off + len) of the file, a hole until now (@zeros: data
 * reading as zeros): a range of its own, or the last one grown (a run
 * writes mostly in order). */
static errcode_t hole_add(struct holes *t, off_t off, off_t len, int zeros)
{
	struct hole *last = t->n ? &t->h[t->n - 1] : NULL;

	if (last && last->zeros == zeros && off >= last->off &&
	    off <= last->off + last->len) {
		if (off + len > last->off + last->len)
			last->len = off + len - last->off;
		return 0;
	}
	if (grow_array(&t->h, &t->cap, t->n + 1, sizeof(*t->h), 64))
		return ENOMEM;
	t->h[t->n].off = off;
	t->h[t->n].len = len;
	t->h[t->n++].zeros = zeros;
	return 0;
}

#define ZBUF (64 << 10)

/*
 * Data the run is about to overwrite in a free block: where it reads as
 * zeros (mke2fs's zeroed ranges, the free blocks sharing a host unit
 * with metadata), remembered, to be written back as zeros.  Other old
 * bytes of free blocks are not kept: reading and holding them all would
 * double the I/O of every run on a dense image.
 */
static errcode_t zeros_at(struct holes *t, off_t off, off_t end)
{
	ssize_t n;
	off_t p;

	if (!t->buf && !(t->buf = malloc(ZBUF)))
		return ENOMEM;
	for (p = off; p < end; p += n) {
		n = pread(t->fd, t->buf, end - p < ZBUF ? (size_t)(end - p) :
			  ZBUF, p);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n < 0)
			return (errcode_t)errno;
		if (!n || !all_zero(t->buf, (size_t)n))
			return 0;
	}
	return hole_add(t, off, end - off, 1);
}

/*
 * The holes of the image file under bytes [off, off + len), remembered
 * before a write or a fallocate fills them (and with @data, its data of
 * zeros the write overwrites).  Widened to whole allocation units: a unit
 * written in part is allocated whole, and a hole punched in part of one
 * frees nothing.
 */
static errcode_t note_holes(struct holes *t, off_t off, off_t len, int data)
{
	off_t p, end = off + len, d, h;
	errcode_t err = 0;

	/* not tracked (no file to give back to): no unit to widen to */
	if (t->fd < 0 || len <= 0 || t->unit <= 0)
		return 0;
	p = off - off % t->unit;
	end += (t->unit - end % t->unit) % t->unit;
	while (!err && p < end) {
		d = lseek(t->fd, p, SEEK_DATA);
		if (d < 0 && errno != ENXIO)
			return (errcode_t)errno;
		if (d < 0 || d > end)
			d = end;	/* ENXIO: a hole to the end of the file */
		if (d > p)
			err = hole_add(t, p, d - p, 0);
		if (err || d >= end)
			break;
		h = lseek(t->fd, d, SEEK_HOLE);
		if (h < 0)
			return (errcode_t)errno;
		if (data && (d > off ? d : off) < (h < off + len ? h : off + len))
			err = zeros_at(t, d > off ? d : off,
				       h < off + len ? h : off + len);
		p = h;
	}
	return err;
}

errcode_t io_guard_note_holes(io_channel ch, unsigned long long off,
			      unsigned long long len)
{
	return note_holes(&guard_of(ch)->holes, (off_t)off, (off_t)len, 0);
}

/* A write of the channel's bytes [off, off + len) is about to be made. */
static errcode_t note_write(io_channel ch, unsigned long long off,
			    unsigned long long len)
{
	struct guard *g = guard_of(ch);
	struct holes *t = &g->holes;

	/* in the commit, the saved blocks are what gives back old bytes */
	return note_holes(t, (off_t)(t->base + off), (off_t)len, !g->saving);
}

static errcode_t guard_close(io_channel ch)
{
	struct guard *g = guard_of(ch);
	errcode_t err;
	size_t i;

	if (--ch->refcount > 0)
		return 0;
	err = io_channel_close(g->real);
	if (g->fault.kind == IO_FAULT_COUNT)
		/* for the fault-injection tests: how many points there are
		 * (only their build sets a fault, tests/orlov-populate-hooks) */
		fprintf(stderr, "orlov-populate: fault points: %lu operations, "
			"commit from %lu\norlov-populate: fault points: %lu "
			"reads\n", g->ops, g->begun + 1, g->reads);
	for (i = 0; i < g->n; i++)
		free(g->saved[i].data);
	free(g->saved);
	keymap_free(&g->saved_at);
	capture_free(g->capt);
	free(g->holes.h);
	free(g->holes.buf);
	free(g);
	free(ch->name);
	free(ch);
	return err;
}

static errcode_t guard_set_blksize(io_channel ch, int blksize)
{
	errcode_t err = io_channel_set_blksize(guard_of(ch)->real, blksize);

	if (!err)
		ch->block_size = blksize;
	return err;
}

static unsigned long long span(io_channel ch, int count)
{
	return count < 0 ? (unsigned long long)-(long long)count :
			   (unsigned long long)count * (unsigned)ch->block_size;
}

/* A write while capturing: into the copies, bytes @off to @off + @len. */
static errcode_t capture_write(io_channel ch, unsigned long long off,
			       unsigned long long len, const unsigned char *p)
{
	unsigned long long bs = (unsigned)ch->block_size;

	struct guard *g = guard_of(ch);
	errcode_t err;

	if (!g->capt && (err = capture_new((size_t)bs, g->cap_budget, &g->capt)))
		return err;
	while (len) {
		unsigned char *data;
		unsigned long long in = off % bs, n = bs - in < len ? bs - in : len;

		err = capture_block(g->capt, g->real, off / bs, &data);
		if (err)
			return err;
		memcpy(data + in, p, (size_t)n);
		off += n;
		p += n;
		len -= n;
	}
	return 0;
}

void io_guard_capture(io_channel ch, int on)
{
	guard_of(ch)->capturing = on;
}

void io_guard_capture_budget(io_channel ch, size_t bytes)
{
	guard_of(ch)->cap_budget = bytes;
}

struct io_capture *io_guard_take_captured(io_channel ch)
{
	struct guard *g = guard_of(ch);
	struct io_capture *c = g->capt;

	g->capt = NULL;		/* reads see the disk again */
	return c;
}

/* A read while blocks are captured: they read back as written. */
static errcode_t read_captured(io_channel ch, unsigned long long block,
			       int count, void *data)
{
	struct guard *g = guard_of(ch);
	unsigned long long bs = (unsigned)ch->block_size, k;
	unsigned long long len = span(ch, count);
	unsigned char *p = data, *tail = NULL;
	errcode_t err = io_channel_read_blk64(g->real, block, count, data);
	size_t i;

	for (k = 0; !err && k * bs < len; k++) {
		if (!capture_find(g->capt, block + k, &i))
			continue;
		if (len - k * bs >= bs) {
			err = capture_read(g->capt, i, 1, p + k * bs);
			continue;
		}
		/* a read of part of a block (a byte count) */
		tail = malloc((size_t)bs);
		if (!tail)
			return ENOMEM;
		err = capture_read(g->capt, i, 1, tail);
		if (!err)
			memcpy(p + k * bs, tail, (size_t)(len - k * bs));
		free(tail);
	}
	return err;
}

static errcode_t guard_read_blk64(io_channel ch, unsigned long long block,
				  int count, void *data)
{
	struct guard *g = guard_of(ch);

	if (++g->reads == g->fault.at && g->fault.kind == IO_FAULT_EIO_READ)
		return EIO;
	if (capture_count(g->capt))
		return read_captured(ch, block, count, data);
	return io_channel_read_blk64(g->real, block, count, data);
}

static errcode_t guard_read_blk(io_channel ch, unsigned long block, int count,
				void *data)
{
	return guard_read_blk64(ch, block, count, data);
}

/* Past this many bytes written, their writeback to the disk is started */
#define BEHIND (16ULL << 20)

/*
 * Start the writeback of what the run wrote so far, without waiting for
 * it: the disk writes the data while the run goes on, where the commit's
 * fsync would otherwise wait for all of it at the end.  Only a hint to
 * the host's page cache (its flusher may write these pages at any time
 * anyway): a failure changes nothing and is not an error.
 */
static void write_behind(struct guard *g, unsigned long long len)
{
	if (g->behind_fd < 0)
		return;
	g->unkicked += len;
	if (g->unkicked < BEHIND)
		return;
	g->unkicked = 0;
	(void)sync_file_range(g->behind_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

void io_guard_write_behind(io_channel ch, int fd)
{
	guard_of(ch)->behind_fd = fd;
}

static errcode_t guard_write_blk64(io_channel ch, unsigned long long block,
				   int count, const void *data)
{
	struct guard *g = guard_of(ch);
	errcode_t err;

	if (g->capturing)
		return capture_write(ch, block * (unsigned)ch->block_size,
				     span(ch, count), data);
	err = tick(g);
	if (!err)
		err = save_range(ch, block * (unsigned)ch->block_size,
				 span(ch, count));
	if (!err)
		err = note_write(ch, block * (unsigned)ch->block_size,
				 span(ch, count));
	if (!err)
		err = io_channel_write_blk64(g->real, block, count, data);
	if (!err)
		write_behind(g, span(ch, count));
	return err;
}

static errcode_t guard_write_blk(io_channel ch, unsigned long block, int count,
				 const void *data)
{
	return guard_write_blk64(ch, block, count, data);
}

static errcode_t guard_write_byte(io_channel ch, unsigned long offset,
				  int count, const void *data)
{
	struct guard *g = guard_of(ch);
	errcode_t err;

	if (g->capturing)
		return capture_write(ch, offset, (unsigned long long)count, data);
	if (!g->real->manager->write_byte || g->whole_super)
		return EXT2_ET_UNIMPLEMENTED;
	err = tick(g);
	if (!err)
		err = save_range(ch, offset, (unsigned long long)count);
	if (!err)
		err = note_write(ch, offset, (unsigned long long)count);
	return err ? err : io_channel_write_byte(g->real, offset, count, data);
}

static errcode_t guard_flush(io_channel ch)
{
	struct guard *g = guard_of(ch);
	errcode_t err;

	if (g->capturing)
		return 0;
	err = tick(g);

	return err ? err : io_channel_flush(g->real);
}

static errcode_t guard_set_option(io_channel ch, const char *option,
				  const char *arg)
{
	io_channel real = guard_of(ch)->real;

	if (!real->manager->set_option)
		return EXT2_ET_INVALID_ARGUMENT;
	return real->manager->set_option(real, option, arg);
}

static errcode_t guard_get_stats(io_channel ch, io_stats *stats)
{
	io_channel real = guard_of(ch)->real;

	if (!real->manager->get_stats)
		return EXT2_ET_UNIMPLEMENTED;
	return real->manager->get_stats(real, stats);
}

static struct struct_io_manager guard_manager = {
	.magic = EXT2_ET_MAGIC_IO_MANAGER,
	.name = "orlov-populate guard I/O manager",
	.close = guard_close,
	.set_blksize = guard_set_blksize,
	.read_blk = guard_read_blk,
	.write_blk = guard_write_blk,
	.flush = guard_flush,
	.write_byte = guard_write_byte,
	.set_option = guard_set_option,
	.get_stats = guard_get_stats,
	.read_blk64 = guard_read_blk64,
	.write_blk64 = guard_write_blk64,
};

void io_guard_whole_super(io_channel ch)
{
	guard_of(ch)->whole_super = 1;
}

errcode_t io_guard_wrap(io_channel backing, const struct io_fault *f,
			io_channel *out)
{
	io_channel ch = calloc(1, sizeof(*ch));
	struct guard *g = calloc(1, sizeof(*g));

	if (ch)
		ch->name = strdup(backing->name ? backing->name : "");
	if (!ch || !g || !ch->name) {
		if (ch)
			free(ch->name);
		free(ch);
		free(g);
		return ENOMEM;
	}
	g->real = backing;
	g->holes.fd = -1;
	g->behind_fd = -1;
	if (f)
		g->fault = *f;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = &guard_manager;
	ch->block_size = backing->block_size;
	ch->refcount = 1;
	ch->flags = backing->flags;
	ch->align = backing->align;
	ch->private_data = g;
	*out = ch;
	return 0;
}

void io_guard_begin(io_channel ch)
{
	guard_of(ch)->saving = 1;
	guard_of(ch)->begun = guard_of(ch)->ops;
}

errcode_t io_guard_rollback(io_channel ch)
{
	struct guard *g = guard_of(ch);
	unsigned char *zero;
	unsigned int max = 0;
	errcode_t err = 0, e;
	size_t i;
	int bs = g->real->block_size;

	g->saving = 0;
	g->fault.kind = IO_FAULT_NONE;
	for (i = 0; i < g->n; i++)
		max = g->saved[i].len > max ? g->saved[i].len : max;
	zero = calloc(1, max ? max : 1);
	if (!zero)
		return ENOMEM;
	/* Newest first: where regions overlap (the block size changed in
	 * between), the oldest save, the true original, is written last. */
	for (i = g->n; i-- > 0;) {
		const struct saved *s = &g->saved[i];

		e = io_channel_set_blksize(g->real, (int)s->len);
		if (!e)
			e = io_channel_write_blk64(g->real, s->off / s->len, 1,
						   s->data ? s->data : zero);
		if (e && !err)
			err = e;	/* go on: put back as much as can be */
	}
	free(zero);
	e = io_channel_set_blksize(g->real, bs);
	if (!err)
		err = e;
	e = io_channel_flush(g->real);
	return err ? err : e;
}

errcode_t io_guard_track_holes(io_channel ch, int fd, unsigned long long base)
{
	struct holes *t = &guard_of(ch)->holes;
	struct stat st;

	if (fstat(fd, &st))
		return (errcode_t)errno;
	t->fd = fd;
	t->base = base;
	t->size = st.st_size;
	t->unit = st.st_blksize > 0 ? (off_t)st.st_blksize : 4096;
	return 0;
}

static void untrack(struct holes *t)
{
	free(t->buf);
	t->buf = NULL;
	free(t->h);
	t->h = NULL;
	t->n = t->cap = 0;
	t->fd = -1;
}

errcode_t io_guard_switch(io_channel ch, const char *path)
{
	struct guard *g = guard_of(ch);
	io_channel to = NULL;
	errcode_t err = io_channel_flush(g->real);

	if (!err)
		err = unix_io_manager->open(path, IO_FLAG_RW, &to);
	if (!err)
		err = io_channel_set_blksize(to, g->real->block_size);
	/* as the image's own channel: every read from the file (open.c) */
	if (!err)
		err = io_channel_set_options(to, "cache=off");
	if (err) {
		if (to)
			io_channel_close(to);
		return err;
	}
	io_channel_close(g->real);
	g->real = to;
	/* the image file is no longer written: no hole of it to give back */
	untrack(&g->holes);
	return 0;
}

void io_guard_keep(io_channel ch)
{
	if (ch && ch->manager == &guard_manager)
		untrack(&guard_of(ch)->holes);
}

static errcode_t write_zeros(struct holes *t, off_t off, off_t len)
{
	errcode_t err = 0;
	size_t n;

	if (!t->buf && !(t->buf = malloc(ZBUF)))
		return ENOMEM;
	memset(t->buf, 0, ZBUF);
	for (; !err && len > 0; off += (off_t)n, len -= (off_t)n) {
		n = len < ZBUF ? (size_t)len : ZBUF;
		err = pwrite_all(t->fd, t->buf, n, off);
	}
	return err;
}

errcode_t io_guard_give_back(io_channel ch)
{
	struct holes *t;
	struct stat st;
	errcode_t err = 0;
	size_t i;

	if (!ch || ch->manager != &guard_manager)
		return 0;	/* the wrap failed: nothing written */
	t = &guard_of(ch)->holes;
	/* The zeros first: a range read as zeros may be the run's own
	 * data in a unit that was a hole before, which the holes punched
	 * after them free again. */
	for (i = 0; t->fd >= 0 && i < 2 * t->n; i++) {
		const struct hole *h = &t->h[i % t->n];
		errcode_t e = 0;

		if (h->zeros != (i < t->n))
			continue;
		if (h->zeros)
			e = write_zeros(t, h->off, h->len);
		else if (fallocate(t->fd, FALLOC_FL_PUNCH_HOLE |
				   FALLOC_FL_KEEP_SIZE, h->off, h->len))
			e = (errcode_t)errno;
		if (e && !err)
			err = e;	/* go on: give back what can be */
	}
	if (t->fd >= 0 && !fstat(t->fd, &st) && st.st_size > t->size &&
	    ftruncate(t->fd, t->size) && !err)
		err = (errcode_t)errno;
	untrack(t);
	return err;
}
