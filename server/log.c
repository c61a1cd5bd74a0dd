/*
 * log.c - the server log, in Redis's line format
 * ("pid:M 30 Nov 2026 05:12:24.123 * message"), to the logfile or stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "server_internal.h"

static FILE *log_fp;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

int log_level_from(const char *s)
{
    static const char *names[] = {"debug", "verbose", "notice", "warning", "nothing"};
    for (int i = 0; i < 5; i++) {
        if (s && !strcasecmp(s, names[i])) {
            return i;
        }
    }
    return LL_NOTICE;
}

void log_setup(void)
{
    const char *path = srv.cfg.logfile;
    if (path && path[0]) {
        FILE *f = fopen(path, "a");
        if (f == NULL) {
            fprintf(stderr, "Can't open the log file %s: %s\n", path, strerror(errno));
            _exit(1);
        }
        log_fp = f;
    } else {
        log_fp = NULL;
    }
}

void log_reopen(void)
{
    const char *path = srv.cfg.logfile;
    if (path == NULL || path[0] == '\0') {
        return;
    }
    FILE *f = fopen(path, "a");
    pthread_mutex_lock(&log_lock);
    if (f != NULL) {
        if (log_fp != NULL) {
            fclose(log_fp);
        }
        log_fp = f;
    }
    pthread_mutex_unlock(&log_lock);
    if (f == NULL) {
        log_msg(LL_WARNING, "Can't reopen the log file %s: %s (still writing the old one)", path,
                strerror(errno));
    }
}

void log_msg(int level, const char *fmt, ...)
{
    if (level < log_level_from(srv.cfg.loglevel)) {
        return;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    time_t t = tv.tv_sec;
    localtime_r(&t, &tm);
    char ts[64];
    size_t n = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(ts + n, sizeof(ts) - n, "%03d", (int)(tv.tv_usec / 1000));
    static const char marks[] = ".-*#";
    FILE *f = log_fp ? log_fp : stdout;
    if (srv.cfg.daemonize && log_fp == NULL) {
        return;
    }
    pthread_mutex_lock(&log_lock);
    fprintf(f, "%d:M %s %c %s\n", (int)getpid(), ts, marks[level < 4 ? level : 3], msg);
    fflush(f);
    pthread_mutex_unlock(&log_lock);
}
