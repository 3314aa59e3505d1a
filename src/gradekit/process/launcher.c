/* gradekit-limits: set a command's resource limits on itself, then exec the command.

   Usage: gradekit-limits REPORT DATA CPU COMMAND [ARG...]

   REPORT is the file descriptor its own failures are written to ("-": stderr). It is closed
   when COMMAND starts (close-on-exec), so nothing the command writes can pass for the
   launcher's own report: a command that prints the launcher's words and exits 125 is a
   command that failed, not a launcher that did.

   Sets no core dumps (RLIMIT_CORE 0), the data limit DATA in bytes (RLIMIT_DATA, soft and
   hard) and the CPU limit CPU in seconds (RLIMIT_CPU, the hard limit one second more), "-"
   leaving a limit as it is; then execs COMMAND in this process (same pid, same process
   group). It does what util-linux's `prlimit` does for gradekit, without a locale to load or
   a library to link: gradekit builds it on first use (process/limits.py), with
   musl where it can (a static musl program starts in a tenth of the time of a glibc one),
   and uses `prlimit` where it cannot build it.

   COMMAND is found as Python's `subprocess` finds it, whatever the C library: a name with a
   `/` as it is, else each folder of PATH in turn ("/bin:/usr/bin" when PATH is unset; an
   empty entry is the current folder), the first error other than "not found" reported, else
   the last attempt's ("not found" or "not a directory"); a file that is neither a program
   nor a `#!` script is an exec format error, never handed to /bin/sh.

   Exit codes, as prlimit's: 126 when COMMAND cannot be executed, 127 when it is not found
   (both with "gradekit-limits: failed to execute COMMAND: REASON (errno N)" on REPORT), 125
   when a limit cannot be set ("gradekit-limits: cannot set the limits: REASON (errno N)") or
   the arguments are wrong. gradekit words REASON from N itself (C libraries word some
   differently: glibc's "File name too long" is musl's "Filename too long"). */

#define _POSIX_C_SOURCE 200809L /* dprintf, even under a strict -std */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef PATH_MAX /* not declared by <limits.h> under a strict -std=c99 */
#define PATH_MAX 4096
#endif

static int set_limit(int resource, const char *text, rlim_t hard_extra) {
    char *end = NULL;
    unsigned long long value;
    struct rlimit limit;

    if (strcmp(text, "-") == 0)
        return 0;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
        errno = EINVAL;
        return -1;
    }
    limit.rlim_cur = (rlim_t)value;
    limit.rlim_max = (rlim_t)value + hard_extra;
    return setrlimit(resource, &limit);
}

/* Exec `command[0]` as subprocess does (see the top); returns the errno that stopped it.
   Each candidate path is built on the stack: the data limit is already set, and a malloc
   could fail under a small one. */
static int exec_command(char **command) {
    const char *name = command[0];
    const char *path = getenv("PATH");
    size_t name_length = strlen(name);
    char candidate[PATH_MAX];
    int first = 0, last = ENOENT;

    if (strchr(name, '/') != NULL) {
        execv(name, command);
        return errno;
    }
    if (path == NULL)
        path = "/bin:/usr/bin";
    for (;;) {
        const char *end = strchr(path, ':');
        size_t length = end == NULL ? strlen(path) : (size_t)(end - path);

        if (length + name_length + 2 > sizeof candidate) {
            errno = ENAMETOOLONG;
        } else {
            if (length > 0) {
                memcpy(candidate, path, length);
                candidate[length++] = '/';
            }
            memcpy(candidate + length, name, name_length + 1);
            execv(candidate, command);
        }
        last = errno;
        if (last != ENOENT && last != ENOTDIR && first == 0)
            first = last;
        if (end == NULL)
            return first != 0 ? first : last;
        path = end + 1;
    }
}

/* The descriptor named by `text` ("-": stderr), made close-on-exec; -1 when it is not one. */
static int report_fd(const char *text) {
    char *end = NULL;
    long fd;

    if (strcmp(text, "-") == 0)
        return STDERR_FILENO;
    errno = 0;
    fd = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || fd < 0 || fd > INT_MAX)
        return -1;
    if (fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0)
        return -1;
    return (int)fd;
}

int main(int argc, char **argv) {
    struct rlimit no_core = {0, 0};
    int failure, report;

    if (argc < 5 || (report = report_fd(argv[1])) < 0) {
        fputs("usage: gradekit-limits REPORT DATA CPU COMMAND [ARG...]\n", stderr);
        return 125;
    }
    if (setrlimit(RLIMIT_CORE, &no_core) != 0 || set_limit(RLIMIT_DATA, argv[2], 0) != 0 ||
        set_limit(RLIMIT_CPU, argv[3], 1) != 0) {
        failure = errno;
        dprintf(report, "gradekit-limits: cannot set the limits: %s (errno %d)\n",
                strerror(failure), failure);
        return 125;
    }
    failure = exec_command(argv + 4);
    dprintf(report, "gradekit-limits: failed to execute %s: %s (errno %d)\n", argv[4],
            strerror(failure), failure);
    return failure == ENOENT ? 127 : 126;
}
