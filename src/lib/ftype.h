/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file's type, from its mode, in the forms the project writes: the
 * directory entry's EXT2_FT_* (ext2_fs.h; the kernel's fs_umode_to_ftype)
 * and the short name of layout dumps and messages.  Host S_IF* and
 * ext2_fs.h's LINUX_S_IF* are the same numbers on Linux.
 */
#ifndef ORLOV_FTYPE_H
#define ORLOV_FTYPE_H

#include <stddef.h>
#include <sys/stat.h>
#include <ext2fs/ext2_fs.h>

/* EXT2_FT_UNKNOWN for a mode of no known type. */
static inline unsigned int ftype_of_mode(unsigned int mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return EXT2_FT_REG_FILE;
	case S_IFDIR: return EXT2_FT_DIR;
	case S_IFCHR: return EXT2_FT_CHRDEV;
	case S_IFBLK: return EXT2_FT_BLKDEV;
	case S_IFIFO: return EXT2_FT_FIFO;
	case S_IFSOCK: return EXT2_FT_SOCK;
	case S_IFLNK: return EXT2_FT_SYMLINK;
	}
	return EXT2_FT_UNKNOWN;
}

/* "dir", "file", "symlink", "fifo", "sock", "chr", "blk"; NULL for a mode
 * of no known type. */
static inline const char *ftype_name_of_mode(unsigned int mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "dir";
	case S_IFREG: return "file";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "sock";
	case S_IFCHR: return "chr";
	case S_IFBLK: return "blk";
	}
	return NULL;
}

#endif
