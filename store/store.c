/*
 * store.c: opening a results database: its identity, its schema and version, upgrades from
 * older llmsim schemas, and the views.
 *
 * Identity: an llmsim database has PRAGMA application_id = STORE_APPLICATION_ID (0x4C4C4D53,
 * "LLMS") and a schema_version table. Before writing anything, store_open looks at the file:
 * an empty database is new; llmsim's application_id, or application_id 0 with a schema_version
 * table (schema version 1 set no application_id), is llmsim's; anything else (another
 * application_id, or tables without schema_version) is another program's and is refused
 * untouched. Upgrading runs in one BEGIN IMMEDIATE transaction, so two processes opening an
 * older database at once upgrade it once. A new database is built whole under a private name
 * and hard-linked into place (create_new), so no process ever finds an empty or half-made one,
 * and none removes a file another may hold.
 *
 * Schema version 6 (this file's runs tables, sweep.c, profile.c, capacity.c, validation.c).
 * Upgrade from 1: ALTER TABLE runs ADD COLUMN offered_rate REAL, ADD COLUMN num_requests
 * INTEGER, the capacity tables; from 2 (and after those, from 1): ALTER TABLE runs ADD COLUMN
 * kv_blocks INTEGER and the request_spans table; from 3 (and after those): the validation
 * tables; from 4 (and after those): the fleet_windows table; from 5: ALTER TABLE fleet_windows
 * ADD COLUMN gpu_ns INTEGER; from 5 and before: the fleet_pools table; then the views,
 * application_id, and schema_version set to 6, all in one transaction.
 *
 * fleet_windows (version 5): an autoscaled run's fleet timeline (engine/fleet.h,
 * eng_fleet_window), one row per autoscaler interval within the run's duration, stored at every
 * level: run_id, win (0, 1, ...), start_ns, end_ns, gpus (per replica), serving_ns, starting_ns,
 * draining_ns (replica time in each state), arrivals, completed, good (within every SLO),
 * rejected, ttft_count (first tokens in the window), p99_ttft_ms (NULL when none), gpu_ns (the
 * window's GPU time, every pool; version 6, NULL in rows written before: gpus times the replica
 * time then). gpu_ns summed over a run's rows is its gpu_hours x 3.6e12 ns exactly. For a run
 * of prefill and decode pools the replica times are both pools' together and gpus is a
 * replica's GPUs when both pools' replicas have as many, else 0.
 *
 * fleet_pools (version 6): each pool's share of a window of a run of prefill and decode pools
 * (none for an aggregated run, whose one pool is fleet_windows' row): run_id, win, pool (0
 * prefill, 1 decode), role ('prefill', 'decode'), gpus (per replica of the pool), serving_ns,
 * starting_ns, draining_ns. The view fleet_timeline gives fleet_windows per window in seconds,
 * replicas, requests/s and GPU-hours.
 *
 * request_spans (version 3): the scheduled spans (admission or swap-in to preemption, swap-out
 * or finish) of every request preempted at least once: run_id, req_id, span (0, 1, ...),
 * replica, start_ns, decode_ns (its prefill done; NULL when preempted before), end_ns,
 * end_reason (finished, preempted, swapped). Stored at the `requests` level, with the request
 * rows. A request never preempted has one span, first_scheduled_ns to finish_ns of its request
 * row, which is not written twice (a row per request would cost a tenth of a stored run's
 * time); the view request_spans_all (same columns) gives every span of every request.
 *
 * Views (re-created on a writable open when their text differs from this llmsim's, so a newer
 * llmsim can change them; user queries should name columns, not rely on their order):
 *
 *   run_summary: one row per run: id, name, model, gpu, dtype, scheduler, replicas,
 *   tensor_parallel, offered_rate, num_requests, seed, profile, created, then one column per
 *   metric, named as eng_metric_names() lists them (completed, ..., p99_ttft_ms, ...) followed
 *   by saturated (appended by the program), then the disaggregated runs' metrics
 *   (eng_pd_metric_names: prefill_gpus, ..., p99_kv_wait_ms), then the KV offload tiers'
 *   (eng_offload_metric_names: kv_offload_cpu_hit_tokens, ..., kv_offload_load_ttft_share):
 *   the metrics table pivoted, NULL where a run has no such metric. The view's text changes
 *   with these lists; an older database gets the new view on its next writable open (below),
 *   its tables untouched, so the schema version stays.
 *     CREATE VIEW run_summary AS SELECT r.id AS id, r.name AS name, r.model AS model, ...,
 *     r.created AS created,
 *     (SELECT m.value FROM metrics m WHERE m.run_id = r.id AND m.name = 'completed')
 *       AS "completed", ... AS "saturated" FROM runs r
 *
 *   sweep_curve: one row per sweep point and repetition: sweep_id, point, rep, seed, run_id,
 *   saturated, params (the point's "key=value,..." text), scheduler, offered_rate (the run's,
 *   else the point's workload.arrival.rate when the sweep varies it) and output_throughput,
 *   request_throughput, median_/p99_ of ttft_ms, tpot_ms, itl_ms, e2el_ms.
 *     CREATE VIEW sweep_curve AS SELECT p.sweep_id AS sweep_id, p.point AS point, p.rep AS rep,
 *     p.seed AS seed, p.run_id AS run_id, p.saturated AS saturated, p.params AS params,
 *     r.scheduler AS scheduler, coalesce(r.offered_rate, (SELECT CAST(q.value AS REAL) FROM
 *     sweep_params q WHERE q.sweep_id = p.sweep_id AND q.point = p.point AND q.key =
 *     'workload.arrival.rate')) AS offered_rate, (SELECT m.value FROM metrics m WHERE
 *     m.run_id = p.run_id AND m.name = 'output_throughput') AS "output_throughput", ...
 *     FROM sweep_points p JOIN runs r ON r.id = p.run_id
 *
 * Example: SELECT scheduler, offered_rate, avg(p99_ttft_ms) FROM sweep_curve WHERE sweep_id = 1
 * GROUP BY point ORDER BY scheduler, offered_rate;
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "store_int.h"

/* runs: offered_rate (requests/s, NULL when the workload has no nominal rate) and
 * num_requests came with version 2, after created (where ALTER TABLE puts them on upgrade). */
const char store_schema_runs[] =
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY, name TEXT, scenario TEXT NOT NULL, scheduler TEXT NOT NULL,"
    " seed INTEGER NOT NULL, version TEXT NOT NULL, profile TEXT NOT NULL, model TEXT, gpu TEXT,"
    " dtype TEXT, replicas INTEGER, tensor_parallel INTEGER, hardware TEXT, store_level TEXT,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),"
    " offered_rate REAL, num_requests INTEGER, kv_blocks INTEGER);"
    "CREATE TABLE IF NOT EXISTS requests ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), req_id INTEGER NOT NULL, replica INTEGER,"
    " arrival_ns INTEGER NOT NULL, first_scheduled_ns INTEGER, last_scheduled_ns INTEGER,"
    " first_token_ns INTEGER, finish_ns INTEGER, prompt_tokens INTEGER NOT NULL,"
    " output_tokens INTEGER NOT NULL, preemptions INTEGER NOT NULL, scheduled INTEGER NOT NULL,"
    " status TEXT NOT NULL, reject_reason TEXT, PRIMARY KEY (run_id, req_id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS iterations ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), replica INTEGER NOT NULL,"
    " iter INTEGER NOT NULL, start_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL,"
    " cpu_ns INTEGER NOT NULL, gpu_ns INTEGER NOT NULL, num_seqs INTEGER NOT NULL,"
    " prefill_tokens INTEGER NOT NULL, decode_tokens INTEGER NOT NULL,"
    " kv_blocks_used INTEGER NOT NULL, preempted INTEGER NOT NULL, prefill_seqs INTEGER,"
    " prefill_pairs REAL, prefill_kv REAL, prefill_q2 REAL, decode_ctx INTEGER,"
    " emit_seqs INTEGER, PRIMARY KEY (run_id, replica, iter)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS metrics ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, value REAL,"
    " PRIMARY KEY (run_id, name)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS request_spans ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), req_id INTEGER NOT NULL,"
    " span INTEGER NOT NULL, replica INTEGER NOT NULL, start_ns INTEGER NOT NULL,"
    " decode_ns INTEGER, end_ns INTEGER NOT NULL, end_reason TEXT NOT NULL,"
    " PRIMARY KEY (run_id, req_id, span)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS fleet_windows ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), win INTEGER NOT NULL,"
    " start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, gpus INTEGER NOT NULL,"
    " serving_ns INTEGER NOT NULL, starting_ns INTEGER NOT NULL, draining_ns INTEGER NOT NULL,"
    " arrivals INTEGER NOT NULL, completed INTEGER NOT NULL, good INTEGER NOT NULL,"
    " rejected INTEGER NOT NULL, ttft_count INTEGER NOT NULL, p99_ttft_ms REAL,"
    " gpu_ns INTEGER, PRIMARY KEY (run_id, win)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS fleet_pools ("
    " run_id INTEGER NOT NULL REFERENCES runs(id), win INTEGER NOT NULL, pool INTEGER NOT NULL,"
    " role TEXT NOT NULL, gpus INTEGER NOT NULL, serving_ns INTEGER NOT NULL,"
    " starting_ns INTEGER NOT NULL, draining_ns INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, win, pool)) WITHOUT ROWID;";

/* Version 1 -> 2 and 2 -> 3, on top of the CREATE TABLE IF NOT EXISTS of every table (which
 * adds the tables a version lacks: request_spans for 3). */
static const char upgrade_1_to_2[] = "ALTER TABLE runs ADD COLUMN offered_rate REAL;"
                                     "ALTER TABLE runs ADD COLUMN num_requests INTEGER;";
static const char upgrade_2_to_3[] = "ALTER TABLE runs ADD COLUMN kv_blocks INTEGER;";
static const char upgrade_5_to_6[] = "ALTER TABLE fleet_windows ADD COLUMN gpu_ns INTEGER;";

/* Whether the connection's last error is a lock held by another connection. */
static int locked(store *s)
{
    int rc = sqlite3_errcode(s->db);
    return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* The process holding a write lock on byte `at` of file path (fcntl's F_GETLK: SQLite's unix
 * locks are POSIX record locks), or 0. */
static pid_t lock_pid(const char *path, off_t at)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};
    pid_t pid = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? fl.l_pid : 0;
    close(fd);
    return pid;
}

/* Who holds the database's write lock, as " (held by process PID: its command line)", or "".
 * MODEL: SQLite's unix VFS (os_unix.c): in WAL mode the writer holds WAL_WRITE_LOCK, byte 120
 * of the -shm file (WALINDEX_LOCK_OFFSET); with a rollback journal, RESERVED_BYTE
 * (PENDING_BYTE + 1 = 0x40000001) of the database file. */
static void lock_holder(const store *s, char *buf, size_t len)
{
    char shm[600];
    snprintf(shm, sizeof shm, "%s-shm", s->path);
    pid_t pid = lock_pid(shm, 120);
    if (!pid)
        pid = lock_pid(s->path, 0x40000001);
    buf[0] = '\0';
    if (!pid)
        return;
    char cmd[256] = "", proc[64];
    snprintf(proc, sizeof proc, "/proc/%ld/cmdline", (long)pid);
    FILE *f = fopen(proc, "rb");
    size_t n = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = 0; i < n; i++)
        cmd[i] = cmd[i] == '\0' ? ' ' : cmd[i] < 0x20 ? '?' : cmd[i];
    while (n > 0 && cmd[n - 1] == ' ')
        n--;
    cmd[n] = '\0';
    snprintf(buf, len, " (held by process %ld%s%s)", (long)pid, n ? ": " : "", cmd);
}

/* err = "PATH: WHAT: MSG"; when the failure is another connection's lock, also how long this
 * one waited and who holds it. */
static int fail_with(store *s, sim_err *err, const char *what, const char *msg)
{
    s->busy = locked(s);
    if (!s->busy)
        return what ? sim_errf(err, "%s: %s: %s", s->path, what, msg)
                    : sim_errf(err, "%s: %s", s->path, msg);
    char who[400];
    lock_holder(s, who, sizeof who);
    return sim_errf(
        err,
        "%s: %s%s%s after waiting %.3g s for another writer%s (LLMSIM_DB_TIMEOUT sets the wait)",
        s->path, what ? what : "", what ? ": " : "", msg, s->timeout_ms / 1000.0, who);
}

int store_fail(store *s, sim_err *err, const char *what)
{
    return fail_with(s, err, what, sqlite3_errmsg(s->db));
}

sqlite3_stmt *store_prepare(store *s, const char *sql, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
        store_fail(s, err, "preparing a statement");
        return NULL;
    }
    return st;
}

sqlite3_stmt *store_prepare_id(store *s, const char *sql, int64_t id, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, sql, err);
    if (st)
        sqlite3_bind_int64(st, 1, id);
    return st;
}

int store_step_once(store *s, sqlite3_stmt *st, const char *what, sim_err *err)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return (rc == SQLITE_DONE || rc == SQLITE_ROW) ? 0 : store_fail(s, err, what);
}

int store_each_row(store *s, sqlite3_stmt *st, store_stmt_row_fn row, void *ctx, const char *what,
                   sim_err *err)
{
    if (!st)
        return -1; /* its preparation failed, and said so in err */
    int rc, stop = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && (stop = row(ctx, st)) == 0)
        ;
    sqlite3_finalize(st);
    if (stop)
        return stop;
    return rc == SQLITE_DONE ? 0 : store_fail(s, err, what);
}

int store_one_row(store *s, sqlite3_stmt *st, const char *noun, int64_t id, const char *what,
                  sim_err *err)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc == SQLITE_DONE)
        sim_errf(err, "%s: no %s %lld in this database", s->path, noun, (long long)id);
    else
        store_fail(s, err, what);
    sqlite3_finalize(st);
    return -1;
}

void store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

void store_col_text(sqlite3_stmt *st, int i, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

int store_exec(store *s, const char *sql, sim_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_with(s, err, NULL, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

const char *store_path(const store *s)
{
    return s->path;
}

int store_schema_version(const store *s)
{
    return s->version;
}

int store_was_busy(const store *s)
{
    return s->busy;
}

void store_set_busy_timeout(store *s, int ms)
{
    s->timeout_ms = ms;
    sqlite3_busy_timeout(s->db, ms);
}

int store_busy_timeout(const store *s)
{
    return s->timeout_ms;
}

/* The wait for another connection's lock: $LLMSIM_DB_TIMEOUT seconds, else
 * STORE_BUSY_TIMEOUT_S. 0, or -1 with err when the variable is not a number of seconds. */
static int default_timeout(int *ms, sim_err *err)
{
    const char *env = getenv("LLMSIM_DB_TIMEOUT");
    *ms = STORE_BUSY_TIMEOUT_S * 1000;
    if (!env || !*env)
        return 0;
    char *end;
    double sec = strtod(env, &end);
    if (*end || !(sec >= 0 && sec <= 86400))
        return sim_errf(err, "LLMSIM_DB_TIMEOUT='%s': expected seconds from 0 to 86400", env);
    *ms = (int)(sec * 1000 + 0.5);
    return 0;
}

/* The one integer sql yields (NULL reads as 0); 0, or -1 with err prefixed by what. */
static int one_int(store *s, const char *sql, const char *what, int64_t *v, sim_err *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return store_fail(s, err, what);
    int rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_fail(s, err, what);
}

typedef enum db_kind { DB_EMPTY, DB_LLMSIM, DB_FOREIGN } db_kind;

/* What the file holds, from reads only; *app gets its application_id. 0, or -1 with err when
 * it cannot be read (not a database, locked). */
static int identify(store *s, db_kind *kind, int64_t *app, sim_err *err)
{
    const char *what = "reading it as an SQLite database";
    int64_t objects, version_col;
    if (one_int(s, "PRAGMA application_id", what, app, err) ||
        one_int(s, "SELECT count(*) FROM sqlite_master", what, &objects, err) ||
        one_int(s,
                "SELECT count(*) FROM pragma_table_info('schema_version') WHERE name = 'version'",
                what, &version_col, err))
        return -1;
    if (*app == STORE_APPLICATION_ID || (*app == 0 && version_col > 0))
        *kind = DB_LLMSIM;
    else if (*app == 0 && objects == 0)
        *kind = DB_EMPTY;
    else
        *kind = DB_FOREIGN;
    return 0;
}

static int refuse_foreign(store *s, int64_t app, sim_err *err)
{
    if (app != 0)
        return sim_errf(err,
                        "%s: not an llmsim database: another program created it (SQLite "
                        "application_id 0x%08X, llmsim's is 0x%08X); refusing to use it",
                        s->path, (unsigned)(uint32_t)app, (unsigned)STORE_APPLICATION_ID);
    return sim_errf(err,
                    "%s: not an llmsim database: it holds tables but no llmsim schema_version "
                    "table (another program created it); refusing to use it",
                    s->path);
}

void store_sql_add(store_sql *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        SIM_ASSERT(NULL, w >= 0);
        if (b->p && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        b->cap = 2 * (b->cap + (size_t)w + 256);
        b->p = sim_xrealloc(b->p, b->cap);
        b->p[b->n] = '\0';
    }
}

/* `(SELECT m.value FROM metrics m WHERE m.run_id = RUN AND m.name = 'NAME') AS "NAME"` */
static void add_metric(store_sql *b, const char *run, const char *name)
{
    store_sql_add(
        b, ", (SELECT m.value FROM metrics m WHERE m.run_id = %s AND m.name = '%s') AS \"%s\"", run,
        name, name);
}

static char *run_summary_sql(void)
{
    static const char *const cols[] = {
        "id",        "name",     "model",           "gpu",          "dtype",
        "scheduler", "replicas", "tensor_parallel", "offered_rate", "num_requests",
        "seed",      "profile",  "created"};
    store_sql b = {0};
    store_sql_add(&b, "CREATE VIEW run_summary AS SELECT");
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        store_sql_add(&b, "%s r.%s AS %s", i ? "," : "", cols[i], cols[i]);
    int n;
    const char *const *names = eng_metric_names(&n);
    for (int i = 0; i < n; i++)
        add_metric(&b, "r.id", names[i]);
    add_metric(&b, "r.id", "saturated");
    names = eng_pd_metric_names(&n);
    for (int i = 0; i < n; i++)
        add_metric(&b, "r.id", names[i]);
    names = eng_offload_metric_names(&n);
    for (int i = 0; i < n; i++)
        add_metric(&b, "r.id", names[i]);
    store_sql_add(&b, " FROM runs r");
    return b.p;
}

static char *sweep_curve_sql(void)
{
    int n;
    const eng_latency *lat = eng_latency_all(&n);
    store_sql b = {0};
    store_sql_add(&b,
                  "CREATE VIEW sweep_curve AS SELECT p.sweep_id AS sweep_id, p.point AS point,"
                  " p.rep AS rep, p.seed AS seed, p.run_id AS run_id, p.saturated AS saturated,"
                  " p.params AS params, r.scheduler AS scheduler, coalesce(r.offered_rate,"
                  " (SELECT CAST(q.value AS REAL) FROM sweep_params q WHERE q.sweep_id = p.sweep_id"
                  " AND q.point = p.point AND q.key = 'workload.arrival.rate')) AS offered_rate");
    add_metric(&b, "p.run_id", "output_throughput");
    add_metric(&b, "p.run_id", "request_throughput");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 2 && lat[i].flags & ENG_LAT_SLO; k++) {
            char name[48];
            snprintf(name, sizeof name, "%s_%s", k ? "p99" : "median", lat[i].stem);
            add_metric(&b, "p.run_id", name);
        }
    store_sql_add(&b, " FROM sweep_points p JOIN runs r ON r.id = p.run_id");
    return b.p;
}

/* Every scheduled span: the stored ones (requests preempted at least once) and the one span
 * of each request never preempted, from its request row. */
static char *spans_all_sql(void)
{
    return sim_xstrdup(
        "CREATE VIEW request_spans_all AS SELECT run_id, req_id, span, replica, start_ns,"
        " decode_ns, end_ns, end_reason FROM request_spans UNION ALL SELECT run_id, req_id, 0,"
        " replica, first_scheduled_ns, first_token_ns, finish_ns, 'finished' FROM requests"
        " WHERE status = 'finished' AND preemptions = 0");
}

/* The fleet timeline in the units users read: replicas in each state (time-averaged over the
 * window), offered load, SLO attainment (a rejection is a miss), GPU-hours. */
static char *fleet_timeline_sql(void)
{
    return sim_xstrdup(
        "CREATE VIEW fleet_timeline AS SELECT run_id, win, start_ns / 1e9 AS start_s,"
        " end_ns / 1e9 AS end_s, CAST(serving_ns AS REAL) / (end_ns - start_ns) AS serving,"
        " CAST(starting_ns AS REAL) / (end_ns - start_ns) AS starting,"
        " CAST(draining_ns AS REAL) / (end_ns - start_ns) AS draining,"
        " arrivals * 1e9 / (end_ns - start_ns) AS offered_rate, completed, rejected,"
        " p99_ttft_ms, CASE WHEN completed + rejected > 0 THEN CAST(good AS REAL) /"
        " (completed + rejected) END AS slo_attainment,"
        " coalesce(gpu_ns, gpus * (serving_ns + starting_ns + draining_ns)) / 3.6e12 AS gpu_hours"
        " FROM fleet_windows");
}

/* Creates view `name` from sql unless the database already holds exactly that text. Frees
 * sql. */
static int put_view(store *s, const char *name, char *sql, sim_err *err)
{
    sqlite3_stmt *st = store_prepare(s, "SELECT type, sql FROM sqlite_master WHERE name = ?", err);
    int rc = -1;
    if (!st)
        goto out;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    char type[16] = "";
    int same = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        store_col_text(st, 0, type, sizeof type);
        const unsigned char *old = sqlite3_column_text(st, 1);
        same = old && strcmp((const char *)old, sql) == 0;
    }
    sqlite3_finalize(st);
    if (type[0] && strcmp(type, "view") != 0) {
        sim_errf(err, "%s: cannot create the view %s: the database has a %s of that name", s->path,
                 name, type);
        goto out;
    }
    if (!same) {
        char drop[96];
        snprintf(drop, sizeof drop, "DROP VIEW IF EXISTS %s", name);
        if (store_exec(s, drop, err) || store_exec(s, sql, err))
            goto out;
    }
    rc = 0;
out:
    free(sql);
    return rc;
}

/* Inside the open transaction: the tables of version v brought to the current version. */
static int build_schema(store *s, int64_t v, int64_t app, sim_err *err)
{
    if (v == 1 && store_exec(s, upgrade_1_to_2, err))
        return -1;
    if (v >= 1 && v <= 2 && store_exec(s, upgrade_2_to_3, err))
        return -1;
    if (v == 5 && store_exec(s, upgrade_5_to_6, err))
        return -1;
    if (store_exec(s, store_schema_runs, err) || store_exec(s, store_schema_profiles, err) ||
        store_exec(s, store_schema_sweeps, err) || store_exec(s, store_schema_capacity, err) ||
        store_exec(s, store_schema_validation, err) ||
        put_view(s, "run_summary", run_summary_sql(), err) ||
        put_view(s, "sweep_curve", sweep_curve_sql(), err) ||
        put_view(s, "request_spans_all", spans_all_sql(), err) ||
        put_view(s, "fleet_timeline", fleet_timeline_sql(), err))
        return -1;
    char sql[96];
    if (app != STORE_APPLICATION_ID) {
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d", STORE_APPLICATION_ID);
        if (store_exec(s, sql, err))
            return -1;
    }
    if (v == STORE_SCHEMA_VERSION)
        return 0;
    if (v == 0)
        snprintf(sql, sizeof sql, "INSERT INTO schema_version VALUES (%d)", STORE_SCHEMA_VERSION);
    else
        snprintf(sql, sizeof sql, "UPDATE schema_version SET version = %d", STORE_SCHEMA_VERSION);
    return store_exec(s, sql, err);
}

static int create_schema(store *s, int64_t app, sim_err *err)
{
    int64_t v = 0;
    if (store_begin(s, err))
        return -1;
    if (store_exec(s, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                   err) ||
        one_int(s, "SELECT max(version) FROM schema_version", "reading the schema version", &v,
                err))
        goto fail;
    if (v > STORE_SCHEMA_VERSION) {
        sim_errf(err, "%s: schema version %lld is newer than this llmsim's (%d)", s->path,
                 (long long)v, STORE_SCHEMA_VERSION);
        goto fail;
    }
    if (build_schema(s, v, app, err) || store_commit(s, err))
        goto fail;
    s->version = STORE_SCHEMA_VERSION;
    return 0;
fail:
    store_rollback(s);
    return -1;
}

/* Opens file (a path or a file: URI), named path in messages. Each connection is used by one
 * thread only, so SQLite's per-connection mutex (taken on every bind and step in its default
 * serialized mode) is only cost: open without it. */
static store *open_with(const char *file, const char *path, int flags, sim_err *err)
{
    store *s = sim_xcalloc(1, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    if (sqlite3_open_v2(file, &s->db, flags, NULL) != SQLITE_OK) {
        sim_errf(err, "%s: cannot open database: %s", path,
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return NULL;
    }
    int ms;
    if (default_timeout(&ms, err) != 0) {
        store_close(s);
        return NULL;
    }
    store_set_busy_timeout(s, ms);
    if (store_exec(s, "PRAGMA foreign_keys=ON", err) != 0) {
        store_close(s);
        return NULL;
    }
    return s;
}

void store_remove_files(const char *path)
{
    static const char *const side[] = {"-journal", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s%s", path, side[i]);
        unlink(p);
    }
    unlink(path);
}

void store_private_path(char *buf, size_t len, const char *path, const char *tag)
{
    static atomic_uint seq;
    snprintf(buf, len, "%s.%s-%ld-%u", path, tag, (long)getpid(), atomic_fetch_add(&seq, 1));
    store_remove_files(buf);
}

/* The WAL mode, and the schema when the file is new or older. */
static int prepare(store *s, int64_t app, sim_err *err)
{
    /* WAL lets readers (plots) run beside a writer (a sweep); synchronous=NORMAL is durable at
     * transaction boundaries in WAL mode, which is what one-transaction-per-run needs. */
    return store_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", err) != 0 ||
                   create_schema(s, app, err) != 0
               ? -1
               : 0;
}

/* A new database for path, built whole under a name of this process's own beside it and then
 * hard-linked into place, so path never names an empty or half-made database: a process that
 * finds path exists opens it as it is, and a failure here removes only files no other process
 * can know. Creating in place could not be made safe: while one process writes the first page
 * of a new file (its RESERVED lock held, the file still 0 bytes), another's PRAGMA
 * journal_mode=WAL fails at once with SQLITE_BUSY, unretried (its lock is an upgrade from a
 * read transaction, which SQLite refuses at once rather than risk a deadlock:
 * sqlite.org/c3ref/busy_handler.html), and the empty file that process then removed as its own
 * took the first one's file and journal from under it (its commit: "disk I/O error"). When
 * another process links its database first, link fails with EEXIST and that database is the
 * one opened. 0 (path now exists), 1 when the file system has no hard links (then path is
 * created in place), or -1 with err. */
static int create_new(const char *path, sim_err *err)
{
    char tmp[600];
    store_private_path(tmp, sizeof tmp, path, "new");
    store *s =
        open_with(tmp, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, err);
    int rc = s && prepare(s, 0, err) == 0 ? 0 : -1;
    /* the last connection's close checkpoints the -wal into the file and deletes it */
    store_close(s);
    if (rc == 0 && link(tmp, path) != 0 && errno != EEXIST)
        rc = errno == EPERM || errno == EOPNOTSUPP
                 ? 1
                 : sim_errf(err, "%s: cannot create database: %s", path, strerror(errno));
    store_remove_files(tmp);
    return rc;
}

store *store_open(const char *path, sim_err *err)
{
    struct stat st;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, made;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        if ((made = create_new(path, err)) < 0)
            return NULL;
        flags |= made ? SQLITE_OPEN_CREATE : 0;
    }
    store *s = open_with(path, path, flags, err);
    if (!s)
        return NULL;
    db_kind kind;
    int64_t app;
    if (identify(s, &kind, &app, err) != 0)
        goto fail;
    if (kind == DB_FOREIGN) {
        refuse_foreign(s, app, err);
        goto fail;
    }
    if (prepare(s, app, err) != 0)
        goto fail;
    return s;
fail:
    store_close(s);
    return NULL;
}

/* A file: URI for path that opens it immutable (no locks, no -wal or -shm files), into buf. */
static void immutable_uri(const char *path, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "file:");
    for (const char *p = path; *p && o + 4 < len; p++) {
        if (*p == '%' || *p == '?' || *p == '#')
            o += (size_t)snprintf(buf + o, len - o, "%%%02X", (unsigned char)*p);
        else
            buf[o++] = *p;
    }
    snprintf(buf + o, len - o, "?immutable=1");
}

/* Whether the last failure on s means the database's WAL index (-shm) can be neither opened
 * nor created: a WAL database on a read-only medium or in a folder the user cannot write. */
static int wal_unreadable(store *s)
{
    int rc = sqlite3_errcode(s->db);
    return rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN;
}

/* A WAL database whose folder is read-only, opened immutable: its main file is all there is,
 * unless a -wal file holds commits not yet merged into it (then refused: they would be
 * missed). NULL with err. */
static store *open_immutable(const char *path, sim_err *err)
{
    char wal[600], uri[1800];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) == 0 && st.st_size > 0) {
        sim_errf(err,
                 "%s: cannot be read where it is: it is in WAL mode, its folder is read-only, and "
                 "%s holds commits not merged into it; copy both files to a writable folder",
                 path, wal);
        return NULL;
    }
    immutable_uri(path, uri, sizeof uri);
    return open_with(uri, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, err);
}

store *store_open_readonly(const char *path, sim_err *err)
{
    store *s = open_with(path, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, err);
    if (!s)
        return NULL;
    db_kind kind;
    int64_t app, v;
    if (identify(s, &kind, &app, err) != 0) {
        if (!wal_unreadable(s))
            goto fail;
        store_close(s);
        if (!(s = open_immutable(path, err)) || identify(s, &kind, &app, err) != 0)
            goto fail;
    }
    if (kind == DB_FOREIGN) {
        refuse_foreign(s, app, err);
        goto fail;
    }
    if (kind == DB_EMPTY) {
        sim_errf(err, "%s: not an llmsim database (no schema_version table)", path);
        goto fail;
    }
    if (one_int(s, "SELECT max(version) FROM schema_version", "reading the schema version", &v,
                err) != 0)
        goto fail;
    s->version = (int)v;
    return s;
fail:
    store_close(s);
    return NULL;
}

void store_close(store *s)
{
    if (!s)
        return;
    for (int i = 0; i < STORE_ST_COUNT; i++)
        sqlite3_finalize(s->cached[i]);
    sqlite3_close(s->db);
    free(s);
}

/* Transactions nest: the outermost is BEGIN IMMEDIATE ... COMMIT, an inner one a savepoint
 * (SAVEPOINT llmsim_N ... RELEASE), so a run written inside a larger transaction (a validation
 * storing its runs with its rows) commits or rolls back with it. */
int store_begin(store *s, sim_err *err)
{
    if (sqlite3_get_autocommit(s->db))
        s->depth = 0; /* SQLite ended the transaction itself (a failed COMMIT, an I/O error) */
    char sql[48];
    if (s->depth == 0)
        snprintf(sql, sizeof sql, "BEGIN IMMEDIATE");
    else
        snprintf(sql, sizeof sql, "SAVEPOINT llmsim_%d", s->depth);
    if (store_exec(s, sql, err) != 0)
        return -1;
    s->depth++;
    return 0;
}

int store_commit(store *s, sim_err *err)
{
    char sql[48];
    if (s->depth <= 1)
        snprintf(sql, sizeof sql, "COMMIT");
    else
        snprintf(sql, sizeof sql, "RELEASE llmsim_%d", s->depth - 1);
    if (store_exec(s, sql, err) != 0)
        return -1;
    s->depth = s->depth > 0 ? s->depth - 1 : 0;
    return 0;
}

void store_rollback(store *s)
{
    char sql[96];
    if (s->depth <= 1 || sqlite3_get_autocommit(s->db)) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        s->depth = 0;
        return;
    }
    s->depth--;
    snprintf(sql, sizeof sql, "ROLLBACK TO llmsim_%d; RELEASE llmsim_%d", s->depth, s->depth);
    sqlite3_exec(s->db, sql, NULL, NULL, NULL);
}
