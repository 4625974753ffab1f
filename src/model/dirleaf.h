/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One directory block's entries, for the linear directory (dir.c) and
 * the htree (ext4/namei_dx.c): a name goes into the first entry with
 * room, as ext2_add_link and ext4_find_dest_de look for it.
 */
#ifndef ORLOV_DIRLEAF_H
#define ORLOV_DIRLEAF_H

#include "model/dir.h"

/* Where names end in a leaf: before the checksum tail with
 * metadata_csum. */
uint32_t dirleaf_top(const struct fs_state *fs);
/* The leaf's struct ext2_dir_entry_tail, its checksum left to the image. */
void dirleaf_init_tail(const struct fs_state *fs, unsigned char *blk);
/* Block @b, taken by the same operation (dirblocks.h: pinned). */
unsigned char *dirleaf_held(const struct dirbuf *d, uint32_t b);
/* room[@b] and first[@b] again, from the entry at @from on. */
void dirleaf_set_room(const struct fs_state *fs, struct dirbuf *d,
		      uint32_t b, uint32_t from);
/* Room in @d's arrays for one more block.  ENOMEM. */
errcode_t dirleaf_grow(struct dirbuf *d);
/* A new block: ext2_get_block for the directory, then one empty entry;
 * *out (when not NULL), its bytes. */
errcode_t dirleaf_new_block(struct fs_state *fs, struct dirbuf *d,
			    unsigned char **out);
void dirleaf_set_entry(unsigned char *de, uint32_t ino, const char *name,
		       size_t len, unsigned int ftype, int filetype);
/* The name's record at @de, after the live entry there if any. */
void dirleaf_insert_at(struct dirbuf *d, uint32_t bs, unsigned char *de,
		       const char *name, size_t len, uint32_t ino,
		       unsigned int ftype);
/* The name into block @b if an entry has room: *added. */
errcode_t dirleaf_add(const struct fs_state *fs, struct dirbuf *d, uint32_t b,
		      const char *name, size_t len, uint32_t ino,
		      unsigned int ftype, int *added);

/* The live entries of the @size bytes of entries at @buf (a block, or
 * an inline directory's i_block or system.data part), as dir_for_each (dir.h). */
errcode_t dirleaf_for_each(const unsigned char *buf, uint32_t size,
			   errcode_t (*fn)(void *arg, const char *name,
					   size_t len, uint32_t ino),
			   void *arg);

#endif
