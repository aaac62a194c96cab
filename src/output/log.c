/*
 * log.c - one-line messages on stderr (see log.h).
 *
 * Messages come from several threads (the main thread, the loader's lane
 * threads, the reader thread drawing progress), so everything that writes
 * stderr or knows whether a progress line is on screen runs under one
 * mutex: a message first clears a progress line, and lines never interleave.
 */
#include "output/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/text_escape.h"

static atomic_bool quiet;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool progress_shown;     /* under mu */
static buf last_error;          /* under mu: log_last_error() */

void log_set_quiet(bool q)
{
    atomic_store(&quiet, q);
}

bool log_is_quiet(void)
{
    return atomic_load(&quiet);
}

/* Under mu: removes the progress line, if one is on screen. */
static void clear_progress_locked(void)
{
    if (progress_shown) {
        fputs("\r\033[K", stderr);
        progress_shown = false;
    }
}

void log_set_progress_shown(bool shown)
{
    pthread_mutex_lock(&mu);
    if (!shown)
        clear_progress_locked();
    progress_shown = shown;
    pthread_mutex_unlock(&mu);
}

/* The message of fmt and ap with its control characters as codes (a
 * message quotes data: a file name, a value, a server's words), so that it
 * stays one line that moves no cursor; "" when out of memory. */
__attribute__((format(printf, 2, 0)))
static void format_escaped(buf *out, const char *fmt, va_list ap)
{
    char small[1024];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof small) {
        text_escape_term(out, small, (size_t)n);
    } else if (n >= 0) {
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            text_escape_term(out, big, (size_t)n);
            free(big);
        }
    }
    va_end(again);
}

void log_progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf line = BUF_INIT;
    format_escaped(&line, fmt, ap);
    pthread_mutex_lock(&mu);
    fputs("\r\033[K", stderr);
    fputs(buf_cstr(&line), stderr);
    fflush(stderr);
    progress_shown = true;
    pthread_mutex_unlock(&mu);
    va_end(ap);
    buf_free(&line);
}

void log_progress_clear(void)
{
    pthread_mutex_lock(&mu);
    clear_progress_locked();
    fflush(stderr);
    pthread_mutex_unlock(&mu);
}

/* Writes one line "idemload: LEVEL MSG" (msg already escaped). */
static void emit_text(const char *level, const char *msg)
{
    pthread_mutex_lock(&mu);
    clear_progress_locked();
    fputs("idemload: ", stderr);
    if (level)
        fputs(level, stderr);
    fputs(msg, stderr);
    fputc('\n', stderr);
    pthread_mutex_unlock(&mu);
}

__attribute__((format(printf, 2, 0)))
static void emit(const char *level, const char *fmt, va_list ap)
{
    buf msg = BUF_INIT;
    format_escaped(&msg, fmt, ap);
    emit_text(level, buf_cstr(&msg));
    buf_free(&msg);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf msg = BUF_INIT;
    format_escaped(&msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&mu);
    buf_clear(&last_error);
    buf_append_str(&last_error, buf_cstr(&msg));
    pthread_mutex_unlock(&mu);
    emit_text("error: ", buf_cstr(&msg));
    buf_free(&msg);
}

char *log_last_error(void)
{
    pthread_mutex_lock(&mu);
    char *copy = strdup(buf_cstr(&last_error));
    pthread_mutex_unlock(&mu);
    return copy;
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
    if (log_is_quiet())
        return;
    va_list ap;
    va_start(ap, fmt);
    emit(NULL, fmt, ap);
    va_end(ap);
}
