// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * orlov-mkfs: mke2fs's command line and behaviour, the kernel's layout.
 * The installed mke2fs makes the filesystem from the same arguments less
 * -d (every superblock field is its own); the engine then copies -d's
 * tree in as orlov-populate would.  Without -d it is mke2fs (exec'd).
 *
 * Where the filesystem is made: an image file (one link, no offset) in a
 * new file next to it, filled and renamed over it, so that a failure
 * leaves the image as it was (or, new, absent), as orlov-populate
 * --create does; a device, a file at -E offset= or with other links, and
 * -S in place, where a failure after mke2fs clears the primary
 * superblock: what is left is unmistakably no finished filesystem.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ext2fs/ext2fs.h>

#include "cli/mkfs_args.h"
#include "cli/options.h"
#include "cli/summary.h"
#include "populate/populate.h"
#include "image/image.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

extern char **environ;

struct job {
	const char *prog;	/* messages' name: argv[0]'s, as mke2fs's */
	struct mkfs_call call;
	struct words env_words;	/* ORLOV_MKFS_OPTIONS */
	struct words eargv;	/* the engine's command line */
	struct options o;
	int have_o;
	char *mke2fs;		/* the installed one */
	char *image;		/* the device operand, a final symlink followed */
	char *tmp;		/* the new image until it has its name */
	int new_image;		/* @tmp becomes an image that was not there */
	int tmp_fd, lock_fd;
};

static const char usage_text[] =
"Usage: %s [mke2fs options] [-d ROOT] device [fs-size]\n"
"Make an ext2/ext3/ext4 filesystem as mke2fs does and, with -d, copy the\n"
"directory or archive ROOT into it laid out as the Linux kernel lays it out\n"
"(Orlov allocator, ext4's mballoc), not as mke2fs -d does.\n"
"\n"
"Every option is mke2fs's (see mke2fs(8)): the installed mke2fs makes the\n"
"filesystem from them without -d, then orlov-populate's engine fills it.\n"
"Called as mkfs.ext2, mkfs.ext3, mkfs.ext4 or mke2fs it behaves as that\n"
"name does; PATH=%s:$PATH makes an unchanged\n"
"pipeline's mkfs.ext4 -d this one.  Without -d: mke2fs itself.\n"
"\n"
"An image file is made next to itself and renamed over it once filled: a\n"
"failure leaves it as it was (or absent).  A device, -E offset=, -S, or an\n"
"existing file at a terminal without -F (mke2fs then asks about what it\n"
"holds): made in place; a failure after mke2fs clears its primary\n"
"superblock.\n"
"\n"
"Environment:\n"
"  ORLOV_MKFS_OPTIONS  orlov-populate's own options for the copy, split as a\n"
"                      shell splits words (e.g. \"--kernel 6.12 --cpus 4\")\n"
"  SOURCE_DATE_EPOCH   fixed times: mke2fs's (as E2FSPROGS_FAKE_TIME) and\n"
"                      the copy's (later times clamped to it)\n"
"Exit status: 0 done, 1 refused or failed (mke2fs's own status when it\n"
"fails).  See orlov-mkfs(8).\n";

/* The installed mke2fs with @argv (argv[0] its name), in this process. */
static int exec_mke2fs(const struct job *j, char **argv)
{
	execv(j->mke2fs, argv);
	com_err(j->prog, (errcode_t)errno, "while running %s", j->mke2fs);
	return 1;
}

/* The command as it was given, for mke2fs alone. */
static int pass_through(const struct job *j, int argc, char **argv)
{
	char **v = calloc((size_t)argc + 1, sizeof(*v));

	if (!v) {
		com_err(j->prog, ENOMEM, "while running %s", j->mke2fs);
		return 1;
	}
	memcpy(v, argv, (size_t)argc * sizeof(*v));
	v[0] = (char *)j->call.name;
	exec_mke2fs(j, v);
	free(v);
	return 1;
}

/* Options the command line decides, or that would undo what it asks. */
static const char *env_conflict(const struct populate_opts *p)
{
	if (p->create || p->mkfs.label || p->mkfs.uuid)
		return "--create, --label and --uuid are mke2fs's options here (-L, -U)";
	if (p->where.partition || p->where.offset)
		return "--partition and --offset: give mke2fs -E offset=";
	if (p->undo || p->atomic || p->in_place || p->dry_run)
		return "--undo, --atomic, --in-place and --dry-run: orlov-mkfs chooses (see orlov-mkfs(8))";
	return NULL;
}

/* ORLOV_MKFS_OPTIONS read as orlov-populate's options, before anything
 * is written: a mistake there is refused as mke2fs refuses its own. */
static int engine_options(struct job *j)
{
	const char *env = getenv("ORLOV_MKFS_OPTIONS"), *msg = "", *bad;
	errcode_t err = words_split(env, &j->env_words);
	size_t i;

	if (err) {
		com_err(j->prog, 0, "ORLOV_MKFS_OPTIONS: unterminated quote");
		return 1;
	}
	err = words_add(&j->eargv, "orlov-mkfs");
	for (i = 0; !err && i < j->env_words.n; i++)
		err = words_add(&j->eargv, j->env_words.v[i]);
	if (!err)
		err = words_add(&j->eargv, "--");
	if (!err)
		err = words_add(&j->eargv, j->call.device);
	if (!err)
		err = words_add(&j->eargv, j->call.root);
	if (!err && !(err = words_add(&j->eargv, NULL)))
		j->eargv.n--;
	if (!err) {
		j->have_o = 1;
		err = options_parse((int)j->eargv.n, j->eargv.v, &j->o, &msg);
	}
	if (err) {
		com_err(j->prog, err, err == ORLOV_ERR_USAGE ?
			"(%s) in ORLOV_MKFS_OPTIONS" : "while %s", msg);
		return 1;
	}
	bad = env_conflict(&j->o.p);
	if (bad || j->o.help || j->o.version) {
		com_err(j->prog, 0, "ORLOV_MKFS_OPTIONS: %s", bad ? bad :
			"--help and --version: ask orlov-mkfs itself");
		return 1;
	}
	return 0;
}

/* mke2fs's environment: SOURCE_DATE_EPOCH as its fake clock too, unless
 * the caller set that clock itself. */
static errcode_t mke2fs_env(const struct job *j, struct words *env)
{
	char buf[48];
	errcode_t err = 0;
	size_t i;

	for (i = 0; !err && environ[i]; i++)
		err = words_add(env, environ[i]);
	if (!err && j->o.p.meta.has_epoch && !getenv("E2FSPROGS_FAKE_TIME")) {
		snprintf(buf, sizeof(buf), "E2FSPROGS_FAKE_TIME=%lu",
			 (unsigned long)j->o.p.meta.epoch);
		err = words_add(env, buf);
	}
	return err ? err : words_add(env, NULL);
}

/* @n bytes to @fd, whole (a pipe or terminal may take them in parts). */
static void write_whole(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* our stderr is gone: nobody to tell */
		p += w;
		n -= (size_t)w;
	}
}

/* @s (@n bytes) onto @out with the new file's name turned into the
 * image's, as the user gave it: what mke2fs and the engine say of the
 * file they wrote names the image it becomes.  With @hold, a tail that
 * could be the start of the name is left (more of it may follow): the
 * bytes taken are returned. */
static size_t renamed(const struct job *j, struct strbuf *out, const char *s,
		      size_t n, int hold)
{
	size_t tl = strlen(j->tmp), i = 0, k;
	const char *hit;

	if (!n)
		return 0;	/* nothing held (a strbuf's s is then NULL) */
	while ((hit = memmem(s + i, n - i, j->tmp, tl))) {
		sb_append(out, s + i, (size_t)(hit - (s + i)));
		sb_append(out, j->call.device, strlen(j->call.device));
		i = (size_t)(hit - s) + tl;
	}
	k = n;
	if (hold)
		for (k = n - i > tl ? n - tl + 1 : i; k < n; k++)
			if (!memcmp(s + k, j->tmp, n - k))
				break;
	sb_append(out, s + i, k - i);
	return k;
}

struct relay {
	const struct job *j;
	struct strbuf held;	/* read, not yet passed on */
	int announce;		/* a new image: "Creating regular file" due */
};

/* What mke2fs wrote to its stderr, passed on renamed. */
static void relay_pass(struct relay *r, int last)
{
	struct strbuf out = { 0 };
	size_t n = r->held.len, i = renamed(r->j, &out, r->held.s, n, !last);

	if (out.len)
		write_whole(STDERR_FILENO, out.s, out.len);
	if (n) {
		memmove(r->held.s, r->held.s + i, n - i);
		sb_truncate(&r->held, n - i);
	}
	/* mke2fs says so after its first line (its version), on stdout,
	 * when it creates the file; here the new file existed before it */
	if (r->announce && out.len && memchr(out.s, '\n', out.len)) {
		r->announce = 0;
		printf("Creating regular file %s\n", r->j->call.device);
		fflush(stdout);
	}
	sb_free(&out);
}

/* mke2fs's stderr read from @fd until it closes it. */
static void relay_stderr(const struct job *j, int fd, int announce)
{
	struct relay r = { .j = j, .announce = announce };
	char buf[4096];
	ssize_t got;

	for (;;) {
		got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (sb_append(&r.held, buf, (size_t)got)) {
			write_whole(STDERR_FILENO, buf, (size_t)got);
			continue;
		}
		relay_pass(&r, 0);
	}
	relay_pass(&r, 1);
	sb_free(&r.held);
}

/* The installed mke2fs on the new file (or the device), without -d: its
 * exit status, its messages as they are, but for the new file's name. */
static int run_mke2fs(struct job *j)
{
	struct words env = { 0 };
	char *dev = j->call.out.v[j->call.dev_at];
	errcode_t err = mke2fs_env(j, &env);
	posix_spawn_file_actions_t fa;
	int rc = 0, st, pfd[2] = { -1, -1 }, have_fa = 0;
	pid_t pid;

	if (!err && !posix_spawn_file_actions_init(&fa))
		have_fa = 1;
	else if (!err)
		err = ENOMEM;
	if (!err && j->tmp) {
		j->call.out.v[j->call.dev_at] = j->tmp;
		if (pipe(pfd) || fcntl(pfd[0], F_SETFD, FD_CLOEXEC) ||
		    fcntl(pfd[1], F_SETFD, FD_CLOEXEC) ||
		    posix_spawn_file_actions_adddup2(&fa, pfd[1], STDERR_FILENO))
			err = (errcode_t)errno;
	}
	fflush(NULL);
	if (!err)
		rc = posix_spawn(&pid, j->mke2fs, &fa, NULL, j->call.out.v,
				 env.v);
	j->call.out.v[j->call.dev_at] = dev;
	words_free(&env);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (!err && !rc && pfd[0] >= 0)
		relay_stderr(j, pfd[0], j->new_image && !j->call.quiet);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (have_fa)
		posix_spawn_file_actions_destroy(&fa);
	if (err || rc) {
		com_err(j->prog, err ? err : (errcode_t)rc, "while running %s",
			j->mke2fs);
		return 1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			com_err(j->prog, (errcode_t)errno, "while waiting for %s",
				j->mke2fs);
			return 1;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* mke2fs asks before it overwrites a filesystem it finds (only then):
 * at a terminal, without -F, at the device's start.  That question must
 * be about the image itself, so such a run stays in place. */
static int mke2fs_would_ask(const struct job *j)
{
	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
	       !j->call.force && !j->call.offset;
}

/* An image file (one link, at its start, not -S): a new file next to it
 * as large as it is, for mke2fs to size the filesystem the same.  No new
 * file (in place) for a device, a file whose owner the copy cannot have,
 * or an existing file mke2fs may ask about. */
static errcode_t make_temp(struct job *j)
{
	enum temp_step step;
	struct stat st;
	errcode_t err;
	int have = !stat(j->image, &st);

	if (j->call.offset || j->call.super_only ||
	    (have && (!S_ISREG(st.st_mode) || st.st_nlink != 1)) ||
	    (have && mke2fs_would_ask(j)) ||
	    (!have && errno != ENOENT))
		return 0;
	j->new_image = !have;
	err = image_lock(j->image, 0, &j->lock_fd);
	if (err)
		return err;
	if (j->lock_fd >= 0) {
		unsigned int n = 0;

		image_remove_stale(j->image, &n);
	}
	err = image_temp_create(j->image, have ? &st : NULL, 0, j->lock_fd,
				&j->tmp, &j->tmp_fd, &step);
	if (have && ((err == EPERM && step == TEMP_OWNER) ||
		     (err && step == TEMP_XATTR)))
		return 0;
	if (!err && have && ftruncate(j->tmp_fd, st.st_size))
		err = (errcode_t)errno;
	return err;
}

/* The engine's words name the file it wrote; to the user the new file is
 * the image it becomes. */
static void report(const struct job *j, errcode_t err,
		   const struct populate_result *res)
{
	struct strbuf b = { 0 };
	const char *s;

	sb_printf(&b, "%s", "");
	s = res->ec.what ? res->ec.what : "populating";
	if (res->ec.where) {
		sb_printf(&b, "%s ", s);
		s = res->ec.where;
	}
	if (j->tmp)
		renamed(j, &b, s, strlen(s), 0);
	else
		sb_printf(&b, "%s", s);
	com_err(j->prog, err, "while %s", b.s ? b.s : "populating");
	sb_free(&b);
}

/* A filesystem mke2fs made in place and the copy did not finish: its
 * primary superblock cleared, so that nothing takes it for a finished
 * one (e2fsck would find an empty filesystem from a backup). */
static void clear_superblock(const struct job *j)
{
	static const char zero[SUPERBLOCK_SIZE];
	int fd = open(j->image, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || pwrite_all(fd, zero, sizeof(zero),
				 (off_t)(j->call.offset + SUPERBLOCK_OFFSET)) ||
	    fsync(fd))
		com_err(j->prog, (errcode_t)errno,
			"while clearing the superblock of the unfinished %s",
			j->call.device);
	else
		fprintf(stderr, "%s: %s: primary superblock cleared: the "
			"filesystem is unfinished\n", j->prog, j->call.device);
	if (fd >= 0)
		close(fd);
}

/* -d's tree copied in by the engine, as orlov-populate IMAGE ROOT. */
static int fill(struct job *j)
{
	struct populate_opts *p = &j->o.p;
	struct populate_result res;
	struct populate_events events;
	errcode_t err;

	p->image = j->tmp ? j->tmp : j->image;
	p->where.offset = j->call.offset;
	/* mke2fs's fresh filesystem: nothing for e2fsck -fn to find */
	p->fsck = 0;
	/* the new file is nobody's until its rename */
	p->in_place = j->tmp != NULL;
	if (!p->verbosity && !j->call.verbose)
		p->verbosity = -1;	/* mke2fs's output, not a summary */
	memset(&res, 0, sizeof(res));
	summary_events(p, &events);
	p->events = &events;
	err = populate(p, &res);
	if (err)
		report(j, err, &res);
	else
		print_summary(p, &res);
	populate_result_free(&res);
	return err ? 1 : 0;
}

/* The filled new file on disk and renamed over the image. */
static int commit_temp(struct job *j)
{
	errcode_t err = 0;
	int fd = open(j->tmp, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fsync(fd))
		err = (errcode_t)errno;
	if (fd >= 0)
		close(fd);
	if (!err)
		err = image_temp_commit(j->tmp, j->image, j->lock_fd);
	if (err) {
		com_err(j->prog, err, "while renaming the new filesystem over %s",
			j->call.device);
		return 1;
	}
	free(j->tmp);
	j->tmp = NULL;
	return 0;
}

/* mke2fs without -d, then the copy, then the rename. */
static int make_and_fill(struct job *j)
{
	struct stat st;
	errcode_t err;
	int rc;

	if (engine_options(j))
		return 1;
	/* as mke2fs -d fails, but before anything is written */
	if (stat(j->call.root, &st)) {
		com_err(j->prog, (errcode_t)errno,
			"while populating file system from %s", j->call.root);
		return 1;
	}
	err = image_resolve(j->call.device, &j->image);
	if (!err)
		err = make_temp(j);
	if (err) {
		com_err(j->prog, err, "while creating the new filesystem next to %s",
			j->call.device);
		return 1;
	}
	rc = run_mke2fs(j);
	if (rc)
		return rc;
	if (j->tmp_fd >= 0) {
		close(j->tmp_fd);	/* its lock: the engine takes its own */
		j->tmp_fd = -1;
	}
	rc = fill(j);
	if (rc && !j->tmp)
		clear_superblock(j);
	if (!rc && j->tmp)
		rc = commit_temp(j);
	if (!rc && !j->call.quiet)
		printf("Copying files into the device: done\n");
	return rc;
}

static void job_free(struct job *j)
{
	if (j->tmp)
		unlink(j->tmp);	/* not renamed: the image is as it was */
	free(j->tmp);
	if (j->tmp_fd >= 0)
		close(j->tmp_fd);
	if (j->lock_fd >= 0)
		close(j->lock_fd);
	free(j->image);
	free(j->mke2fs);
	if (j->have_o)
		options_free(&j->o);
	words_free(&j->eargv);
	words_free(&j->env_words);
	mkfs_args_free(&j->call);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	struct job j;
	errcode_t err;
	int rc;

	add_error_table(&et_orlv_error_table);
	add_error_table(&et_ext2_error_table);
	memset(&j, 0, sizeof(j));
	j.tmp_fd = j.lock_fd = -1;
	j.prog = base ? base + 1 : argv[0];
	if (argc == 2 && !strcmp(argv[1], "--help")) {
		printf(usage_text, j.prog, MKFS_LINK_DIR);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("orlov-mkfs %s\n", PACKAGE_VERSION);
		return 0;
	}
	err = mkfs_args_parse(argc, argv, &j.call);
	if (!err)
		err = mkfs_find_mke2fs(argv[0], &j.mke2fs);
	if (err) {
		com_err(j.prog, err == ENOENT ? ORLOV_ERR_NO_MKFS : err,
			"while looking for mke2fs");
		job_free(&j);
		return 1;
	}
	/* mke2fs's own business: its usage errors, -n, -V, no -d, no
	 * device, a new file without a size (it says so, writing nothing) */
	if (j.call.usage_error || !j.call.root || j.call.noaction ||
	    j.call.version || !j.call.device ||
	    (!j.call.has_size && access(j.call.device, F_OK))) {
		rc = pass_through(&j, argc, argv);
		job_free(&j);
		return rc;
	}
	rc = make_and_fill(&j);
	job_free(&j);
	return rc;
}
