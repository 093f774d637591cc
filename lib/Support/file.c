/* Reading a whole file or stream into memory (see file.h). */
#include "Support/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

bool tl_read_fd(int fd, char **data, size_t *len) {
  struct stat sb;
  size_t cap = 1 << 16, n = 0;
  /* a regular file's size as the first guess (+1: end of file is seen without growing) */
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 0 && (uint64_t)sb.st_size < SIZE_MAX / 2)
    cap = (size_t)sb.st_size + 1;
  char *buf = malloc(cap + 1);
  if (!buf) return errno = ENOMEM, false;
  for (;;) {
    if (n == cap) {
      char *nb = cap <= SIZE_MAX / 4 ? realloc(buf, cap * 2 + 1) : NULL;
      if (!nb) {
        free(buf);
        return errno = ENOMEM, false;
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      free(buf);
      return errno = e, false;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return true;
}

bool tl_read_file(const char *path, char **data, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = tl_read_fd(fd, data, len);
  int e = errno;
  close(fd);
  errno = e;
  return ok;
}
