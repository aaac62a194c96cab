/*
 * log.c - one-line messages on stderr (see log.h).
 */
#include "output/log.h"

#include <stdarg.h>
#include <stdio.h>

static bool quiet;
static bool progress_shown;

void log_set_quiet(bool q)
{
    quiet = q;
}

bool log_is_quiet(void)
{
    return quiet;
}

void log_set_progress_shown(bool shown)
{
    progress_shown = shown;
}

static void emit(const char *level, const char *fmt, va_list ap)
{
    if (progress_shown) {
        fputs("\r\033[K", stderr);
        progress_shown = false;
    }
    fputs("idemload: ", stderr);
    if (level)
        fputs(level, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void log_info(const char *fmt, ...)
{
    if (quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(NULL, fmt, ap);
    va_end(ap);
}
