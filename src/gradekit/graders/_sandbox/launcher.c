/* gradekit-limits: set a command's resource limits on itself, then exec the command.

   Usage: gradekit-limits DATA CPU COMMAND [ARG...]

   Sets no core dumps (RLIMIT_CORE 0), the data limit DATA in bytes (RLIMIT_DATA, soft and
   hard) and the CPU limit CPU in seconds (RLIMIT_CPU, the hard limit one second more), "-"
   leaving a limit as it is; then execs COMMAND in this process (same pid, same process
   group), searching PATH as execvp does. It does what util-linux's `prlimit` does for
   gradekit, without a locale to load or a library to link: gradekit builds it on first use
   (graders/_sandbox/launcher.py) and uses `prlimit` where it cannot.

   Exit codes, as prlimit's: 126 when COMMAND cannot be executed, 127 when it is not found
   (both with "gradekit-limits: failed to execute COMMAND: REASON" on stderr), 125 when a
   limit cannot be set or the arguments are wrong. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

int main(int argc, char **argv) {
    struct rlimit no_core = {0, 0};
    int failure;

    if (argc < 4) {
        fputs("usage: gradekit-limits DATA CPU COMMAND [ARG...]\n", stderr);
        return 125;
    }
    if (setrlimit(RLIMIT_CORE, &no_core) != 0 || set_limit(RLIMIT_DATA, argv[1], 0) != 0 ||
        set_limit(RLIMIT_CPU, argv[2], 1) != 0) {
        fprintf(stderr, "gradekit-limits: cannot set the limits: %s\n", strerror(errno));
        return 125;
    }
    execvp(argv[3], argv + 3);
    failure = errno;
    fprintf(stderr, "gradekit-limits: failed to execute %s: %s\n", argv[3], strerror(failure));
    return failure == ENOENT ? 127 : 126;
}
