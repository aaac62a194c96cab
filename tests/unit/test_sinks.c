/*
 * test_sinks.c - the dispatch of the run's sinks (src/pipeline/sink.h):
 * hooks run in the order the sinks were opened and on_run_end in the
 * reverse; a failing hook stops the others and becomes the file's error;
 * the rows of a merged chunk go to every sink row by row (the figures
 * per group take a row before its --changes line, and a --changes file
 * that fails leaves the later rows uncounted, as before the sinks); the
 * versions only when the merge filled them; the reading hooks run on a
 * thread of their own, and a build with assertions (the sanitizer builds)
 * stops a reading hook called on the loading thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/sink.h"
#include "util/exitcodes.h"

/* One test sink: its letter, the hook calls it saw, where it fails. */
typedef struct probe {
    char name;
    buf *trace;                 /* shared by the sinks of a test */
    int fail_row;               /* on_row_merged fails at this row's line (-1: never) */
    bool fail_completed;
} probe;

static void note(probe *p, const char *what)
{
    buf_printf(p->trace, "%c%s ", p->name, what);
}

static void on_start(void *st, const char *path, int64_t total)
{
    (void)path, (void)total;
    note(st, "start");
}

static void on_read(void *st, const row *r)
{
    probe *p = st;
    buf_printf(p->trace, "%cread%llu ", p->name, (unsigned long long)r->line);
}

static bool on_reject(void *st, const char *path, uint64_t line, const char *reason,
                      const raw_record *rec, buf *err)
{
    (void)path, (void)reason, (void)rec;
    probe *p = st;
    buf_printf(p->trace, "%creject%llu ", p->name, (unsigned long long)line);
    if (p->fail_row == (int)line) {
        buf_printf(err, "%c cannot keep the reject", p->name);
        return false;
    }
    return true;
}

static bool on_merged(void *st, const char *path, const row *r, merge_action a,
                      const row_version *before, const row_version *after, buf *err)
{
    (void)path;
    probe *p = st;
    buf_printf(p->trace, "%c%llu%s%s%s ", p->name, (unsigned long long)r->line,
               merge_action_name(a), before ? "+before" : "", after ? "+after" : "");
    if (p->fail_row == (int)r->line) {
        buf_printf(err, "%c cannot take row %llu", p->name, (unsigned long long)r->line);
        return false;
    }
    return true;
}

static bool on_completed(void *st, buf *err)
{
    probe *p = st;
    note(p, "sync");
    if (p->fail_completed)
        buf_printf(err, "%c cannot sync", p->name);
    return !p->fail_completed;
}

static bool on_end(void *st, run_report *rep, buf *err)
{
    (void)rep, (void)err;
    note(st, "end");
    return true;
}

static const sink_ops probe_ops = {
    .name = "probe",
    .on_file_start = on_start,
    .on_row_read = on_read,
    .on_reject = on_reject,
    .on_row_merged = on_merged,
    .before_file_completed = on_completed,
    .on_run_end = on_end,
};

static const sink_ops versions_ops = {.name = "versions", .wants_versions = true};

typedef struct fixture {
    buf trace;
    probe p[3];
    sink_set set;
    file_report fr;
    run_report rep;
} fixture;

static void setup_probes(fixture *f)
{
    memset(f, 0, sizeof *f);
    sink_set_init(&f->set);
    for (int i = 0; i < 3; i++) {
        f->p[i] = (probe){.name = (char)('A' + i), .trace = &f->trace, .fail_row = -1};
        sink_set_add(&f->set, &probe_ops, &f->p[i]);
    }
}

static void teardown_probes(fixture *f)
{
    f->set.n = 0;
    file_report_clear(&f->fr);
    buf_free(&f->trace);
}

static void test_order(void **state)
{
    (void)state;
    fixture f;
    setup_probes(&f);
    sinks_file_start(&f.set, "f.csv", 10);
    assert_int_equal(sinks_before_file_completed(&f.set, &f.fr, true), EXIT_OK);
    assert_null(f.fr.error);
    assert_int_equal(sinks_run_end(&f.set, &f.rep), EXIT_OK);
    assert_string_equal(buf_cstr(&f.trace), "Astart Bstart Cstart Async Bsync Csync Cend Bend Aend ");
    assert_int_equal(f.set.n, 0);
    teardown_probes(&f);
}

static void test_first_failure_stops(void **state)
{
    (void)state;
    fixture f;
    setup_probes(&f);
    f.p[1].fail_completed = true;
    assert_int_equal(sinks_before_file_completed(&f.set, &f.fr, true), EXIT_INPUT);
    assert_string_equal(buf_cstr(&f.trace), "Async Bsync ");
    assert_non_null(f.fr.error);
    assert_string_equal(f.fr.error, "B cannot sync");
    teardown_probes(&f);
}

static row mk(uint64_t line, const char *otn)
{
    row r;
    memset(&r, 0, sizeof r);
    r.line = line;
    r.tenant_id = 1;
    r.channel = "wechat";
    r.channel_len = 6;
    r.out_trade_no = otn;
    r.out_trade_no_len = strlen(otn);
    r.callback_type = "pay";
    r.callback_type_len = 3;
    r.payload = "{}";
    r.payload_len = 2;
    r.raw = "x";
    r.raw_len = 1;
    return r;
}

/* A chunk of three rows, lines 0..2, in key order, with its outcome. */
static chunk *three_rows(chunk_outcome *out, bool details)
{
    chunk *ch = chunk_new(8);
    assert_non_null(ch);
    const char *otn[] = {"K0", "K1", "K2"};
    for (uint64_t i = 0; i < 3; i++) {
        row r = mk(i, otn[i]);
        assert_true(chunk_add(ch, &r));
    }
    chunk_sort(ch);
    out->details = details;
    assert_true(chunk_outcome_reserve(out, 3));
    out->action[0] = MERGE_INSERTED;
    out->action[1] = MERGE_UPDATED;
    out->action[2] = MERGE_UNCHANGED;
    if (details)
        out->has_before[1] = true;
    return ch;
}

static void test_rows_row_by_row(void **state)
{
    (void)state;
    fixture f;
    setup_probes(&f);
    f.p[1].fail_row = 2;
    chunk_outcome out = {0};
    chunk *ch = three_rows(&out, false);
    assert_int_equal(sinks_chunk_merged(&f.set, "f.csv", ch, &out, &f.fr), EXIT_INPUT);
    assert_string_equal(buf_cstr(&f.trace), "A0inserted B0inserted C0inserted "
                                            "A1updated B1updated C1updated "
                                            "A2unchanged B2unchanged ");
    assert_string_equal(f.fr.error, "B cannot take row 2");
    chunk_free(&ch);
    chunk_outcome_free(&out);
    teardown_probes(&f);
}

static void test_versions_when_filled(void **state)
{
    (void)state;
    fixture f;
    setup_probes(&f);
    assert_false(sinks_want_versions(&f.set));
    sink_set_add(&f.set, &versions_ops, &f);
    assert_true(sinks_want_versions(&f.set));
    chunk_outcome out = {0};
    chunk *ch = three_rows(&out, true);
    assert_int_equal(sinks_chunk_merged(&f.set, "f.csv", ch, &out, &f.fr), EXIT_OK);
    assert_string_equal(buf_cstr(&f.trace), "A0inserted+after B0inserted+after C0inserted+after "
                                            "A1updated+before+after B1updated+before+after "
                                            "C1updated+before+after A2unchanged+after "
                                            "B2unchanged+after C2unchanged+after ");
    assert_null(f.fr.error);
    chunk_free(&ch);
    chunk_outcome_free(&out);
    teardown_probes(&f);
}

typedef struct reading {
    fixture *f;
    bool ok;
    buf err;
} reading;

static void *read_some(void *arg)
{
    reading *rd = arg;
    row r = mk(7, "K7");
    sinks_row_read(&rd->f->set, &r);
    raw_record rec = {.line = 8, .raw = "x", .raw_len = 1};
    rd->ok = sinks_reject(&rd->f->set, "f.csv", 8, "bad", &rec, &rd->err);
    return NULL;
}

static void test_reading_thread(void **state)
{
    (void)state;
    fixture f;
    setup_probes(&f);
    f.p[0].fail_row = 8;
    reading rd = {.f = &f, .err = BUF_INIT};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_some, &rd), 0);
    pthread_join(t, NULL);
    assert_false(rd.ok);
    assert_string_equal(buf_cstr(&rd.err), "A cannot keep the reject");
    assert_string_equal(buf_cstr(&f.trace), "Aread7 Bread7 Cread7 Areject8 ");
    buf_free(&rd.err);
    teardown_probes(&f);
}

static void test_wrong_thread_caught(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip();
#else
    fixture f;
    setup_probes(&f);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        row r = mk(1, "K1");
        sinks_row_read(&f.set, &r);     /* a reading hook, on the loading thread */
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    teardown_probes(&f);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_first_failure_stops),
        cmocka_unit_test(test_rows_row_by_row),
        cmocka_unit_test(test_versions_when_filled),
        cmocka_unit_test(test_reading_thread),
        cmocka_unit_test(test_wrong_thread_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
