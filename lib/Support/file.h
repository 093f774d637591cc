/* Reading a whole file or stream into memory: the compiler's sources
 * (Driver, Frontend), the disk cache's entries (Runtime) and the tools'
 * inputs (tools/common, which compile this file in: it needs nothing but
 * the C library and POSIX). */
#ifndef TL_SUPPORT_FILE_H
#define TL_SUPPORT_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* Reads fd from its current offset to end of file into a malloc'd buffer
 * (*data, owned by the caller, with a NUL after the last byte; *len bytes,
 * the NUL not counted).  Interrupted reads (EINTR) are retried.  false with
 * errno set (ENOMEM when out of memory) on failure, *data and *len then
 * untouched; fd stays open either way. */
bool tl_read_fd(int fd, char **data, size_t *len);

/* Opens path read-only and reads it whole as tl_read_fd does.  false with
 * errno set when it cannot be opened or read. */
bool tl_read_file(const char *path, char **data, size_t *len);

#endif
