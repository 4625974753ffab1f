/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The source of a tree to copy.  The populate loop sees entries only
 * through this interface, in creation order: depth first, a directory
 * before its contents, names of one directory compared bytewise.  The host
 * directory walker is one implementation; another reader (a tar stream)
 * can serve the same visitor.
 */
#ifndef ORLOV_WALK_H
#define ORLOV_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <et/com_err.h>

#include "lib/names.h"
#include "lib/src_xattr.h"

struct src_entry;
struct strbuf;

/* Data access for a regular file: extents in ascending order. */
struct src_data_ops {
	/* Next data range at or after @off: [*start, *end), or *start ==
	 * *end == st_size when only a hole remains. */
	errcode_t (*next_data)(const struct src_entry *e, uint64_t off,
			       uint64_t *start, uint64_t *end);
	/* Read exactly @len bytes at @off. */
	errcode_t (*read)(const struct src_entry *e, void *buf, size_t len,
			  uint64_t off);
	/* The atime after the reads so far, which may have moved it (a host
	 * file of another owner: no O_NOATIME); NULL when reads cannot. */
	errcode_t (*atime)(const struct src_entry *e, struct timespec *ts);
	/* A note by which source/reread.h reads the data again once the
	 * walk has left the file, appended to @note. */
	errcode_t (*note)(const struct src_entry *e, struct strbuf *note);
};

struct src_entry {
	const char *path;	/* relative to the source root, "" for it */
	const char *name;	/* last component */
	size_t name_len;
	struct stat st;
	uint32_t fsflags;	/* FS_IOC_GETFLAGS of directories, else 0 */
	const char *link_target;	/* symlinks */
	size_t link_len;
	struct src_xattr *xattrs;
	size_t nxattrs;
	const struct src_data_ops *data;	/* regular files */
	void *priv;		/* the reader's own */
	/* The set-ID bits an owner mapping cleared (meta_apply()); 0 when
	 * a device table or fs_config line gives the mode itself. */
	mode_t setid_cleared;
	/* A device table line gave the mode and owners: for the source
	 * root (a line for "/"), the target takes them even without
	 * --root-attrs, as genext2fs's root takes them. */
	int table_attrs;
};

/* What the walker calls, in creation order.  A non-zero return stops the
 * walk and is returned by walk_tree(). */
struct walk_visitor {
	errcode_t (*enter_dir)(void *ctx, const struct src_entry *e);
	errcode_t (*leave_dir)(void *ctx, const struct src_entry *e);
	errcode_t (*leaf)(void *ctx, const struct src_entry *e);
	/* Called once with what failed and where, before the walk returns an
	 * error the walker itself found (the visitor reports it). */
	void (*error)(void *ctx, errcode_t err, const char *what,
		      const char *path);
	/* The same for the scratch file the walk keeps a large directory's
	 * names in (@doing: "writing", "reading"): its error is TMPDIR's,
	 * not the source's.  NULL: told through error. */
	void (*scratch_error)(void *ctx, errcode_t err, const char *doing);
	void *ctx;
};

/*
 * One directory's names, sorted bytewise: the order entries are created
 * in.  The names one after another, each NUL-terminated, in one buffer,
 * and a word per name (its offset there, its length, readdir's d_type):
 * 17 MiB for a million, not 60.  With a budget, a directory larger than
 * it is sorted in runs of that size kept in a scratch file (lib/spill.h)
 * and merged as it is walked: a million names then take about 2 MiB.
 */
struct walk_names_run;

struct walk_names {
	char *buf;
	size_t len, buf_cap;
	uint64_t *at;		/* offset << 16 | length << 8 | d_type */
	size_t n, cap;		/* names in memory (the run being read) */
	size_t count;		/* every name, in memory or in a run */
	size_t budget;		/* bytes of buf and at a run may take; 0:
				   never spilled (names in memory only) */
	/* spilled: the runs, their scratch file, the names taken so far
	 * (in order only) and the last one's */
	struct walk_names_run *runs;
	size_t nruns, runs_cap;
	int spill_fd;		/* open once nruns > 0 */
	size_t run_buf;		/* each run's read buffer */
	uint64_t spill_len;
	size_t taken;
	char name[256];
	int scratch;		/* the error returned was the scratch file's */
};

/* The budget walk_read_names gives each directory. */
#define WALK_NAMES_BUDGET (1u << 20)

/* Name @i of @ns held in memory (not spilled: walk_names_spilled). */
static inline const char *walk_name(const struct walk_names *ns, size_t i)
{
	return ns->buf + (ns->at[i] >> 16);
}

static inline size_t walk_name_len(const struct walk_names *ns, size_t i)
{
	return (ns->at[i] >> 8) & 0xff;
}

/* readdir's d_type: a hint, never trusted */
static inline unsigned char walk_name_type(const struct walk_names *ns,
					   size_t i)
{
	return ns->at[i] & 0xff;
}

static inline int walk_names_spilled(const struct walk_names *ns)
{
	return ns->nruns > 0;
}

/* @s (@len bytes, at most 255) appended; past the budget, the names so far
 * sorted into a run in the scratch file.  ENAMETOOLONG past 255. */
errcode_t walk_names_add(struct walk_names *ns, const char *s, size_t len,
			 unsigned char type);
/* Every name added: sorted, ready to be taken. */
errcode_t walk_names_sort(struct walk_names *ns);
/* Name @i, in memory or (spilled) the next in order, @i == taken: valid
 * until the next is taken. */
errcode_t walk_names_get(struct walk_names *ns, size_t i, const char **s,
			 size_t *len, unsigned char *type);
/* Is @s among the sorted @ns (in memory)? */
int walk_names_find(const struct walk_names *ns, const char *s, size_t len);
void walk_names_free(struct walk_names *ns);

/* The names of the directory open as @dirfd, sorted, within
 * WALK_NAMES_BUDGET; ns->scratch tells an error of the scratch file. */
errcode_t walk_read_names(int dirfd, struct walk_names *ns);

/* Open @name below @dirfd without following it (O_NOATIME where the owner
 * allows) and make sure it is what lstat saw in @st: device, inode, type,
 * and a regular file's size; ORLOV_ERR_SOURCE_CHANGED when not. */
errcode_t walk_open_same(int dirfd, const char *name, const struct stat *st,
			 int flags, int *out);
/* walk_open_same of a regular file, which must not have been written
 * since @st either: the same modification and change times. */
errcode_t walk_open_unchanged(int dirfd, const char *name,
			      const struct stat *st, int *out);

/* @st's allocated blocks cover its size: a check that only bounds the
 * blocks a file takes (the check pass) may count every block below its
 * size without asking where its holes are (a hole only makes them fewer),
 * a system call saved on the dense files that are most of a tree. */
static inline int src_allocated_whole(const struct stat *st)
{
	return (uint64_t)st->st_blocks * 512 >= (uint64_t)st->st_size;
}

struct walk_opts {
	int want_xattrs;	/* read extended attributes */
	int want_data;		/* regular files get data ops (else NULL) */
	int ranges_only;	/* ... of which the visitor calls only
				   next_data, never read (a check pass) */
	int ahead;		/* open regular files ahead on a second
				   thread (source/ahead.h) */
	const struct file_id *skip;	/* files left out of the walk: the */
	size_t nskip;			/* image and its copies */
};

/* Walk the host directory @root.  The root itself is passed to enter_dir
 * with path "" (its contents go into the target directory). */
errcode_t walk_tree(const char *root, const struct walk_opts *opts,
		    const struct walk_visitor *v);

#endif
