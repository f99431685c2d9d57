// LD_PRELOAD shim for PowerLossTests: records, in order, every call a process makes that
// changes what is on disk in one folder (SHIM_DIR), one line each in SHIM_TRACE:
//   open <TAB> fd <TAB> flags <TAB> path     write <TAB> fd <TAB> bytes written
//   fsync <TAB> fd                           close <TAB> fd
//   rename <TAB> from <TAB> to               unlink <TAB> path
// The test replays the trace against a model of a disk that keeps only what was fsynced,
// and cuts the power before each call in turn.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_FDS 4096
static int trace_fd = -1;
static const char *folder;
static size_t folder_length;
static char tracked[MAX_FDS];

__attribute__((constructor)) static void start(void) {
    folder = getenv("SHIM_DIR");
    const char *trace = getenv("SHIM_TRACE");
    if (!folder || !trace) return;
    folder_length = strlen(folder);
    // The raw system call, so the trace itself is not traced.
    trace_fd = (int)syscall(SYS_openat, AT_FDCWD, trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

static void note(const char *format, ...) {
    if (trace_fd < 0) return;
    char line[8192];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(line, sizeof line, format, arguments);
    va_end(arguments);
    if (length > 0) syscall(SYS_write, trace_fd, line, (size_t)length);
}

static int inside(const char *path) {
    return folder && path && strncmp(path, folder, folder_length) == 0
        && (path[folder_length] == 0 || path[folder_length] == '/');
}

static int watched(int fd) { return fd >= 0 && fd < MAX_FDS && tracked[fd]; }

static int opened(int fd, int flags, const char *path) {
    if (fd >= 0 && fd < MAX_FDS && inside(path)) {
        tracked[fd] = 1;
        note("open\t%d\t%d\t%s\n", fd, flags, path);
    }
    return fd;
}

#define OPEN(name, ...)                                                                  \
    int name(__VA_ARGS__, int flags, ...) {                                              \
        mode_t mode = 0;                                                                 \
        if (flags & (O_CREAT | __O_TMPFILE)) {                                           \
            va_list arguments;                                                           \
            va_start(arguments, flags);                                                  \
            mode = va_arg(arguments, mode_t);                                            \
            va_end(arguments);                                                           \
        }

OPEN(open, const char *path)
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open");
    return opened(real(path, flags, mode), flags, path);
}
OPEN(open64, const char *path)
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open64");
    return opened(real(path, flags, mode), flags, path);
}
OPEN(openat, int at, const char *path)
    static int (*real)(int, const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "openat");
    return opened(real(at, path, flags, mode), flags, path);
}
OPEN(openat64, int at, const char *path)
    static int (*real)(int, const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "openat64");
    return opened(real(at, path, flags, mode), flags, path);
}

ssize_t write(int fd, const void *bytes, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "write");
    ssize_t written = real(fd, bytes, count);
    if (written > 0 && watched(fd)) note("write\t%d\t%zd\n", fd, written);
    return written;
}

static int synced(int fd, int result) {
    if (result == 0 && watched(fd)) note("fsync\t%d\n", fd);
    return result;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fsync");
    return synced(fd, real(fd));
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fdatasync");
    return synced(fd, real(fd));
}

int close(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "close");
    if (watched(fd)) {
        tracked[fd] = 0;
        note("close\t%d\n", fd);
    }
    return real(fd);
}

int rename(const char *from, const char *to) {
    static int (*real)(const char *, const char *);
    if (!real) real = dlsym(RTLD_NEXT, "rename");
    int result = real(from, to);
    if (result == 0 && (inside(from) || inside(to))) note("rename\t%s\t%s\n", from, to);
    return result;
}

int unlink(const char *path) {
    static int (*real)(const char *);
    if (!real) real = dlsym(RTLD_NEXT, "unlink");
    int result = real(path);
    if (result == 0 && inside(path)) note("unlink\t%s\n", path);
    return result;
}
