// SPDX-License-Identifier: GPL-2.0-or-later
/* --fs-config's table: the forms e2fsdroid's reader takes, the last line
 * of a path winning, malformed lines named by number, and what a line
 * does to an entry (owner, permission bits, security.capability). */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "source/fsconfig.h"
#include "source/walk.h"
#include "lib/orlov_err.h"
#include "tap.h"

static char file[64];

static void write_file(const char *text)
{
	FILE *f = fopen(file, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("Bail out! cannot write %s\n", file);
		exit(1);
	}
}

/* The line number fsconfig_read names for @text, or 0 when it reads. */
static unsigned int bad_line(const char *text)
{
	struct fsconfig fc;
	unsigned int line;
	errcode_t err;

	write_file(text);
	err = fsconfig_read(file, &fc, &line);
	if (!err) {
		fsconfig_free(&fc);
		return 0;
	}
	return err == ORLOV_ERR_FSCONFIG_SYNTAX ? line : 1000;
}

static void test_read(void)
{
	struct fsconfig fc;
	const struct fsconfig_line *l;
	unsigned int line = 9;

	write_file("# comment\n\n 0 0 0711\n/system 0 0 751\n"
		   "'system/a b' 1 2 0644\nsystem/x 5 5 0600 selabel=u:r:x:s0\n"
		   "system/x 6 7 0640 capabilities=0x1000000c0\r\n"
		   "system/y 0 0 0755 capabilities=8192\n");
	is_int(fsconfig_read(file, &fc, &line), 0, "the file reads");
	is_int(line, 0, "no line named");
	is_int(fc.n, 5, "five paths, the twice-given one once");
	l = fsconfig_find(&fc, "");
	tap_ok(l && l->mode == 0711, "a line starting with a blank is the root");
	l = fsconfig_find(&fc, "system");
	tap_ok(l && l->mode == 0751, "a leading / is dropped");
	l = fsconfig_find(&fc, "system/a b");
	tap_ok(l && l->uid == 1 && l->gid == 2, "a quoted path holds a blank");
	l = fsconfig_find(&fc, "system/x");
	tap_ok(l && l->uid == 6 && l->gid == 7 && l->mode == 0640 &&
	       l->caps == 0x1000000c0ULL && l->line == 7,
	       "the last line of a path wins, hex capabilities, CRLF");
	l = fsconfig_find(&fc, "system/y");
	tap_ok(l && l->caps == 8192, "decimal capabilities");
	tap_ok(!fsconfig_find(&fc, "system/z") && !fsconfig_find(&fc, "/system"),
	       "no line, no match (paths are exact)");
	is_int(fc.caps_line, 7, "the first line with capabilities");
	fsconfig_free(&fc);

	is_int(bad_line("a 0 0\n"), 1, "three fields");
	is_int(bad_line("a 0 0 0755\nb x 0 0755\n"), 2, "a UID not a number");
	is_int(bad_line("a 0 -1 0755\n"), 1, "a negative GID");
	is_int(bad_line("a 4294967296 0 0755\n"), 1, "a UID beyond 32 bits");
	is_int(bad_line("a 0 0 0855\n"), 1, "a mode not octal");
	is_int(bad_line("a 0 0 017777\n"), 1, "a mode with a file type");
	is_int(bad_line("a 0 0 0755 junk\n"), 1, "a field that is no KEY=VALUE");
	is_int(bad_line("a 0 0 0755 capabilities=0xZ\n"), 1,
	       "capabilities not a number");
	is_int(bad_line("'a 0 0 0755\n"), 1, "an unterminated quote");
	is_int(bad_line("a 0 0 0755 other=1\n"), 0, "another KEY=VALUE ignored");
}

static void test_apply(void)
{
	struct fsconfig fc;
	struct fsconfig_walk w;
	struct src_entry e;
	struct src_xattr old[2] = {
		{ "security.capability", (unsigned char *)"x", 1 },
		{ "user.keep", (unsigned char *)"k", 1 },
	};
	static const unsigned char want[20] = {
		0x01, 0, 0, 0x02, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0,
	};
	unsigned int line;

	write_file("vendor/bin/sh 0 2000 0755 capabilities=0x1000000c0\n"
		   "vendor/bin/ln 0 2000 0644\nvendor/etc 1 1 0700\n");
	if (fsconfig_read(file, &fc, &line)) {
		tap_ok(0, "the table reads");
		return;
	}
	fsconfig_walk_start(&w, &fc, "/vendor");
	memset(&e, 0, sizeof(e));
	e.path = "bin/sh";
	e.st.st_mode = S_IFREG | 04600;
	e.xattrs = old;
	e.nxattrs = 2;
	is_int(fsconfig_walk_apply(&w, &e), 0, "below the target: its path first");
	tap_ok(e.st.st_mode == (S_IFREG | 0755) && e.st.st_uid == 0 &&
	       e.st.st_gid == 2000, "owner, group, permission bits; the type kept");
	tap_ok(e.nxattrs == 2 && !strcmp(e.xattrs[0].name, "user.keep") &&
	       !strcmp(e.xattrs[1].name, "security.capability") &&
	       e.xattrs[1].size == 20 && !memcmp(e.xattrs[1].value, want, 20),
	       "security.capability revision 2, effective, replacing the source's");
	memset(&e, 0, sizeof(e));
	e.path = "bin/ln";
	e.st.st_mode = S_IFLNK | 0777;
	is_int(fsconfig_walk_apply(&w, &e), 0, "a symlink");
	tap_ok(e.st.st_mode == (S_IFLNK | 0777) && e.st.st_gid == 2000 &&
	       !e.nxattrs, "a symlink keeps 0777, takes the owner, no capability");
	e.path = "bin/none";
	is_int(fsconfig_walk_apply(&w, &e), ORLOV_ERR_FSCONFIG_MISSING,
	       "an entry without a line");
	e.path = "";
	e.st.st_mode = S_IFDIR | 0755;
	is_int(fsconfig_walk_apply(&w, &e), 0, "the target without a line");
	tap_ok(e.st.st_mode == (S_IFDIR | 0755), "the target as it was");
	fsconfig_walk_end(&w);
	fsconfig_walk_start(&w, &fc, "/");
	e.path = "lost+found";
	e.st.st_uid = 9;
	is_int(fsconfig_walk_apply(&w, &e), 0, "lost+found at the root: no line");
	is_int(e.st.st_uid, 9, "lost+found as it was");
	e.path = "vendor/lost+found";
	is_int(fsconfig_walk_apply(&w, &e), ORLOV_ERR_FSCONFIG_MISSING,
	       "lost+found elsewhere needs one");
	fsconfig_walk_end(&w);
	fsconfig_free(&fc);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	if (!tmp || !*tmp || strlen(tmp) > 40)
		tmp = "/tmp";
	snprintf(file, sizeof(file), "%s/fsconfig.XXXXXX", tmp);
	fd = mkstemp(file);
	if (fd < 0) {
		printf("Bail out! mkstemp\n");
		return 1;
	}
	close(fd);
	test_read();
	test_apply();
	unlink(file);
	return tap_done();
}
