// SPDX-License-Identifier: GPL-2.0-or-later
/* populate/wb_ahead: the writeback's reader ahead has the small files of
 * the delayed records, in their order, read from the source by their
 * notes; a large file, a file asked out of order or one changed since its
 * note are left to the caller; stopping never waits on a full ring. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "populate/wb_ahead.h"
#include "model/write.h"
#include "model/ext4/mballoc.h"
#include "source/reread.h"
#include "source/source.h"
#include "tap.h"
#include "fixture.h"

static char dir[] = "/tmp/wbahead.XXXXXX";

static void make_file(const char *name, size_t size, int byte)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		exit(99);
	while (size--)
		fputc(byte, f);
	fclose(f);
}

/* The walk's note of @name: its identity now, and its path. */
static void note_of(const char *name, struct strbuf *note)
{
	char path[256];
	struct stat st;
	struct src_note_id id;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &st))
		exit(99);
	memset(&id, 0, sizeof(id));
	id.dev = (uint64_t)st.st_dev;
	id.ino = (uint64_t)st.st_ino;
	id.size = (uint64_t)st.st_size;
	id.mtime = st.st_mtim.tv_sec;
	id.mtime_ns = (uint32_t)st.st_mtim.tv_nsec;
	id.ctime = st.st_ctim.tv_sec;
	id.ctime_ns = (uint32_t)st.st_ctim.tv_nsec;
	sb_truncate(note, 0);
	if (sb_append(note, (const char *)&id, sizeof(id)) ||
	    sb_append(note, name, strlen(name)))
		exit(99);
}

/* One delayed file's record, of @size bytes in 1 KiB blocks. */
static void record(struct fs_state *fs, struct delalloc *da, uint32_t ino,
		   const struct strbuf *note, uint64_t size)
{
	struct ifile f;
	uint64_t lb;

	if (delalloc_start(da, ino, note->s, note->len))
		exit(99);
	for (lb = 0; lb * 1024 < size; lb++)
		ext4_da_reserve_block(fs, da, lb);
	delalloc_cur(da)->size = size;
	ifile_init(&f, ino, 2048);
	if (delalloc_keep(fs, da, &f))
		exit(99);
	ifile_release(fs, &f);
}

int main(void)
{
	struct fs_state fs = { .colour = 0 };
	struct delalloc da;
	struct strbuf na = { 0 }, nb = { 0 }, nc = { 0 };
	struct source src = { 0 };
	struct wb_ahead *a;
	unsigned char buf[2048];
	int i, ok;

	/* a stop that waits for ever fails the test */
	alarm(60);
	if (!mkdtemp(dir))
		return 99;
	make_file("a", 100, 'a');
	make_file("b", 70000, 'b');	/* past what is read ahead */
	make_file("c", 1500, 'c');
	note_of("a", &na);
	note_of("b", &nb);
	note_of("c", &nc);
	src.dir = dir;
	memset(&da, 0, sizeof(da));
	fixture_state(&fs, 4, 2048, 8192, 300);
	if (mb_state_init(&fs, 1))
		return 99;
	fs.mb->delalloc = 1;
	record(&fs, &da, 12, &na, 100);
	record(&fs, &da, 13, &nb, 70000);
	record(&fs, &da, 14, &nc, 1500);

	is_int(wb_ahead_start(&a, &src, -1, 0, da.rec, da.rec_len), 0,
	       "the reader starts");
	memset(buf, 0xff, sizeof(buf));
	is_int(wb_ahead_read(a, na.s, na.len, buf, 1024, 0), 1,
	       "the first file read ahead");
	ok = 1;
	for (i = 0; i < 1024; i++)
		ok &= buf[i] == (i < 100 ? 'a' : 0);
	tap_ok(ok, "its 100 bytes, then zeros to the block's end");
	is_int(wb_ahead_read(a, nb.s, nb.len, buf, 1024, 0), 0,
	       "a large file: the caller's to read");
	is_int(wb_ahead_read(a, nc.s, nc.len, buf, 1024, 1024), 1,
	       "the third file's second block");
	ok = 1;
	for (i = 0; i < 1024; i++)
		ok &= buf[i] == (i < 476 ? 'c' : 0);
	tap_ok(ok, "the rest of its 1,500 bytes");
	is_int(wb_ahead_read(a, na.s, na.len, buf, 1024, 0), 0,
	       "a file asked out of order: not had");
	wb_ahead_stop(a);

	/* a file changed after its note: left to the caller, who refuses */
	make_file("a", 100, 'x');
	is_int(wb_ahead_start(&a, &src, -1, 0, da.rec, da.rec_len), 0,
	       "again, the first file rewritten");
	is_int(wb_ahead_read(a, na.s, na.len, buf, 1024, 0), 0,
	       "a changed file is not read ahead");
	wb_ahead_stop(a);

	/* more records than the ring holds, none taken: stop still returns */
	delalloc_records_taken(&da);
	for (i = 0; i < 100; i++)
		record(&fs, &da, (uint32_t)(20 + i), &nc, 1500);
	is_int(wb_ahead_start(&a, &src, -1, 0, da.rec, da.rec_len), 0,
	       "100 records");
	usleep(100000);
	wb_ahead_stop(a);
	tap_ok(1, "stopped with the ring full (a hang: SIGALRM)");

	unlink(strcat(strcpy((char *)buf, dir), "/a"));
	unlink(strcat(strcpy((char *)buf, dir), "/b"));
	unlink(strcat(strcpy((char *)buf, dir), "/c"));
	rmdir(dir);
	sb_free(&na);
	sb_free(&nb);
	sb_free(&nc);
	delalloc_free(&fs, &da);
	mb_state_free(&fs);
	fs_state_free(&fs);
	return tap_done();
}
