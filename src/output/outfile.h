/*
 * outfile.h - an output written whole or not at all: the report, the page,
 * the discrepancies file.
 *
 * A regular file (or a path that names nothing yet) is written as a new file
 * beside it, ".NAME.idemload-XXXXXX" in the same directory with the mode
 * PATH has (or the one the umask gives a new file), and renamed onto PATH by
 * outfile_commit(): a run that fails or is killed while writing leaves what
 * PATH held, never a file cut short.  A symbolic link is followed: the file
 * it names is replaced so, and the link stays.  A file with several hard
 * links, one in a directory this user cannot write to, or one of another
 * owner that this user cannot give back to it, is rewritten in place (every
 * name sees the new content, the owner stays).  Anything else is written as it
 * goes: "-" (standard output), a pipe, a device (/dev/null).  So is a path
 * that names the very file this process's standard output or error is
 * redirected to (/dev/stdout, /dev/fd/2, or the file's own name after
 * `>> run.log`): written through that stream, after what it holds, never
 * replaced or truncated (outfile_std_stream).
 *
 * A writer holds an exclusive flock on its temporary file while it lives;
 * outfile_open() removes the temporary files of the same PATH that no
 * process holds (left by a run killed before its rename) and are owned by
 * this user.  Nothing here logs but that removal; errors come back with
 * errno set, and the caller names the output in its message.
 *
 * Ownership: outfile_open() returns what outfile_commit() or
 * outfile_discard() frees (they set the caller's pointer to NULL).  The
 * stream belongs to the outfile: never fclose it.  path must outlive it.
 */
#ifndef IDEMLOAD_OUTFILE_H
#define IDEMLOAD_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct outfile outfile;

/* The standard stream path writes through: stdout for "-", and stdout or
 * stderr for a path naming the regular file that stream is (the same device
 * and inode: /dev/stdout, /proc/self/fd/1, or its name), as the shell's `>`
 * or `>>` opened it.  Writing such a path by its name would truncate the
 * file or rename another over it, losing what the stream wrote there (the
 * log a cron line appends to).  NULL for any other path. */
FILE *outfile_std_stream(const char *path);

/* Opens path ("-": standard output) for its new content.  NULL with errno
 * (ENOMEM included) when it cannot be created. */
outfile *outfile_open(const char *path);

/* The stream to write the content to. */
FILE *outfile_stream(const outfile *f);

/* Flushes what was written and makes it durable (fsync; a pipe or a device,
 * which cannot be fsynced, is only flushed).  May be called before the
 * commit of a transaction the content describes.  False with errno. */
bool outfile_sync(outfile *f);

/* Syncs (when not yet done), closes and renames the new file onto path,
 * then fsyncs the directory.  False with errno, the new file removed and
 * path as it was.  *fp is freed either way. */
bool outfile_commit(outfile **fp);

/* Drops the new content (NULL *fp: nothing): the file beside path is
 * removed; content written in place stays as written. */
void outfile_discard(outfile **fp);

#endif
