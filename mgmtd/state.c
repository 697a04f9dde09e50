// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd's durable state in SQLite (state.h has the durability argument).
 * Every write is BEGIN IMMEDIATE ... COMMIT, so a crash leaves either the
 * whole change or none of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "state.h"
#include "log.h"

#define MG_STATE_SCHEMA_VERSION 1

struct mg_state {
	sqlite3 *db;
	int lock_fd;			/* <path>.lock, flock()ed; -1: none */
	pthread_mutex_t lock;		/* one statement sequence at a time */
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta ("
	" key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS vm_policy ("
	" id TEXT PRIMARY KEY, mask INTEGER NOT NULL,"
	" quota INTEGER NOT NULL, min INTEGER NOT NULL, low INTEGER NOT NULL,"
	" max INTEGER NOT NULL, weight INTEGER NOT NULL,"
	" priority INTEGER NOT NULL, updated_ms INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS knobs ("
	" id INTEGER PRIMARY KEY CHECK (id = 1), mask INTEGER NOT NULL,"
	" policy TEXT NOT NULL, return_interval_ms INTEGER NOT NULL,"
	" oversub_pct INTEGER NOT NULL, thrash_window_s INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS events ("
	" id INTEGER PRIMARY KEY, ts_ms INTEGER NOT NULL, type TEXT NOT NULL,"
	" vm TEXT NOT NULL, detail TEXT NOT NULL);"
	/* Added within schema 1: older databases gain them at their next open. */
	"CREATE TABLE IF NOT EXISTS vm_owner ("
	" id TEXT PRIMARY KEY, domain TEXT NOT NULL,"
	" updated_ms INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS domain_report ("
	" domain TEXT PRIMARY KEY, reason TEXT NOT NULL,"
	" updated_ms INTEGER NOT NULL);";

static int sql_err(struct mg_state *st, const char *what)
{
	mg_err("state: %s: %s", what, sqlite3_errmsg(st->db));
	return -EIO;
}

static int exec(struct mg_state *st, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		mg_err("state: %s: %s", sql, msg ? msg : "?");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/*
 * One mgmtd per database. Two would each act on their own view of the VMs
 * and overwrite each other's policies, and the second's REST socket would
 * replace the first's. <path>.lock is flock()ed for as long as the state
 * is open (the kernel drops the lock with its process, so a crash leaves
 * nothing to clean up) and names the holder's pid for the message.
 */
static int state_lock(const char *path, int *out)
{
	char lp[4200], pid[24] = "";
	ssize_t n;
	int fd, ret;

	if ((size_t)snprintf(lp, sizeof(lp), "%s.lock", path) >= sizeof(lp))
		return -ENAMETOOLONG;
	fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		ret = -errno;
		mg_err("state: cannot open %s: %s", lp, strerror(-ret));
		return ret;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		if (ret == -EBUSY)
			mg_err("state: %s is in use by another mgmtd (pid %s, holding %s): refusing to start a second one on it",
			       path, pid[0] ? pid : "unknown", lp);
		else
			mg_err("state: cannot lock %s: %s", lp, strerror(-ret));
		close(fd);
		return ret;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n)
		mg_warn("state: cannot write the pid into %s: %s", lp,
			strerror(errno));
	*out = fd;
	return 0;
}

int mg_state_open(const char *path, struct mg_state **out)
{
	struct mg_state *st;
	sqlite3_stmt *s = NULL;
	int ret = -EIO;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->lock_fd = -1;
	pthread_mutex_init(&st->lock, NULL);
	if (strcmp(path, ":memory:")) {
		ret = state_lock(path, &st->lock_fd);
		if (ret) {
			pthread_mutex_destroy(&st->lock);
			free(st);
			return ret;
		}
		ret = -EIO;
	}
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		mg_err("state: cannot open %s: %s", path,
		       st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto err_close;
	}
	sqlite3_busy_timeout(st->db, 5000);
	/* WAL first: synchronous=FULL then means "fsync the WAL on COMMIT". */
	if (strcmp(path, ":memory:")) {
		if (sqlite3_prepare_v2(st->db, "PRAGMA journal_mode=WAL", -1, &s,
				       NULL) != SQLITE_OK ||
		    sqlite3_step(s) != SQLITE_ROW ||
		    strcmp((const char *)sqlite3_column_text(s, 0), "wal")) {
			mg_err("state: %s: cannot enable WAL", path);
			goto err_close;
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	if (exec(st, "PRAGMA synchronous=FULL") ||
	    exec(st, "PRAGMA foreign_keys=ON") ||
	    exec(st, "BEGIN IMMEDIATE"))
		goto err_close;
	if (exec(st, schema) ||
	    exec(st, "INSERT OR IGNORE INTO meta(key, value) VALUES "
		 "('schema', '1')")) {
		exec(st, "ROLLBACK");
		goto err_close;
	}
	if (sqlite3_prepare_v2(st->db,
			       "SELECT value FROM meta WHERE key = 'schema'",
			       -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW ||
	    sqlite3_column_int(s, 0) != MG_STATE_SCHEMA_VERSION) {
		mg_err("state: %s: schema version is not %d", path,
		       MG_STATE_SCHEMA_VERSION);
		sqlite3_finalize(s);
		exec(st, "ROLLBACK");
		goto err_close;
	}
	sqlite3_finalize(s);
	if (exec(st, "COMMIT"))
		goto err_close;
	*out = st;
	return 0;

err_close:
	sqlite3_finalize(s);
	sqlite3_close(st->db);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	pthread_mutex_destroy(&st->lock);
	free(st);
	return ret;
}

void mg_state_close(struct mg_state *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	/* The lock last: the database is closed when the next one opens it. */
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* SQLite integers are signed 64-bit; byte counts above 2^63 are refused. */
static int bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
	if (v > (uint64_t)INT64_MAX)
		return SQLITE_RANGE;
	return sqlite3_bind_int64(s, i, (sqlite3_int64)v);
}

int mg_state_put_policy(struct mg_state *st, const char *id,
			const struct mg_vm_policy *p, unsigned int mask)
{
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	if (!id || strlen(id) >= MG_ID_LEN || mask > MG_POL_ALL)
		return -EINVAL;
	pthread_mutex_lock(&st->lock);
	if (exec(st, "BEGIN IMMEDIATE")) {
		ret = -EIO;
		goto out_unlock;
	}
	if (!mask) {
		rc = sqlite3_prepare_v2(st->db, "DELETE FROM vm_policy WHERE id = ?1",
					-1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	} else {
		rc = sqlite3_prepare_v2(st->db,
			"INSERT OR REPLACE INTO vm_policy(id, mask, quota, min, low,"
			" max, weight, priority, updated_ms) VALUES"
			" (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", -1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int(s, 2, (int)mask);
		if (rc == SQLITE_OK)
			rc = bind_u64(s, 3, p->quota);
		if (rc == SQLITE_OK)
			rc = bind_u64(s, 4, p->min);
		if (rc == SQLITE_OK)
			rc = bind_u64(s, 5, p->low);
		if (rc == SQLITE_OK)
			rc = bind_u64(s, 6, p->max);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(s, 7, p->weight);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(s, 8, p->priority);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(s, 9, now_ms());
	}
	if (rc == SQLITE_RANGE) {
		ret = -EINVAL;
	} else if (rc != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE) {
		ret = sql_err(st, "put policy");
	}
	sqlite3_finalize(s);
	if (ret) {
		exec(st, "ROLLBACK");
		goto out_unlock;
	}
	if (exec(st, "COMMIT")) {
		exec(st, "ROLLBACK");
		ret = -EIO;
	}
out_unlock:
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int mg_state_load_policies(struct mg_state *st, struct mg_state_policy **out,
			   size_t *n)
{
	struct mg_state_policy *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db,
			       "SELECT id, mask, quota, min, low, max, weight,"
			       " priority FROM vm_policy ORDER BY id", -1, &s,
			       NULL) != SQLITE_OK) {
		ret = sql_err(st, "load policies");
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct mg_state_policy *e;
		const char *id = (const char *)sqlite3_column_text(s, 0);

		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				goto out;
			}
			v = nv;
		}
		e = &v[cnt++];
		memset(e, 0, sizeof(*e));
		snprintf(e->id, sizeof(e->id), "%s", id ? id : "");
		e->mask = (unsigned int)sqlite3_column_int(s, 1) & MG_POL_ALL;
		e->p.quota = (uint64_t)sqlite3_column_int64(s, 2);
		e->p.min = (uint64_t)sqlite3_column_int64(s, 3);
		e->p.low = (uint64_t)sqlite3_column_int64(s, 4);
		e->p.max = (uint64_t)sqlite3_column_int64(s, 5);
		e->p.weight = (uint32_t)sqlite3_column_int64(s, 6);
		e->p.priority = (uint32_t)sqlite3_column_int64(s, 7);
	}
	if (rc != SQLITE_DONE)
		ret = sql_err(st, "load policies");
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int mg_state_put_knobs(struct mg_state *st, const struct mg_knobs *k,
		       unsigned int mask)
{
	sqlite3_stmt *s = NULL;
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	if (exec(st, "BEGIN IMMEDIATE")) {
		ret = -EIO;
		goto out_unlock;
	}
	if (sqlite3_prepare_v2(st->db,
			       "INSERT OR REPLACE INTO knobs(id, mask, policy,"
			       " return_interval_ms, oversub_pct, thrash_window_s)"
			       " VALUES (1, ?1, ?2, ?3, ?4, ?5)", -1, &s,
			       NULL) != SQLITE_OK ||
	    sqlite3_bind_int(s, 1, (int)mask) != SQLITE_OK ||
	    sqlite3_bind_text(s, 2, k->policy, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 3, k->return_interval_ms) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 4, k->oversub_pct) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 5, k->thrash_window_s) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_DONE)
		ret = sql_err(st, "put knobs");
	sqlite3_finalize(s);
	if (ret || exec(st, "COMMIT")) {
		exec(st, "ROLLBACK");
		ret = -EIO;
	}
out_unlock:
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int mg_state_load_knobs(struct mg_state *st, struct mg_knobs *k,
			unsigned int *mask)
{
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	*mask = 0;
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db,
			       "SELECT mask, policy, return_interval_ms,"
			       " oversub_pct, thrash_window_s FROM knobs"
			       " WHERE id = 1", -1, &s, NULL) != SQLITE_OK) {
		ret = sql_err(st, "load knobs");
		goto out;
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *pol = (const char *)sqlite3_column_text(s, 1);

		*mask = (unsigned int)sqlite3_column_int(s, 0) & MG_KNOB_ALL;
		snprintf(k->policy, sizeof(k->policy), "%s", pol ? pol : "");
		k->return_interval_ms = (uint32_t)sqlite3_column_int64(s, 2);
		k->oversub_pct = (uint32_t)sqlite3_column_int64(s, 3);
		k->thrash_window_s = (uint32_t)sqlite3_column_int64(s, 4);
	} else if (rc != SQLITE_DONE) {
		ret = sql_err(st, "load knobs");
	}
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

/*
 * A text value by a text key in one of the small key tables (vm_owner,
 * domain_report): value NULL deletes the row. One statement each: its own
 * transaction, durable once it returns.
 */
static int kv_put(struct mg_state *st, const char *ins, const char *del,
		  const char *key, const char *value, const char *what)
{
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, value ? ins : del, -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && value)
		rc = sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && value)
		rc = sqlite3_bind_int64(s, 3, now_ms());
	if (rc != SQLITE_OK || sqlite3_step(s) != SQLITE_DONE)
		ret = sql_err(st, what);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

/* The value of key ("" and -ENOENT if none), cut to len. */
static int kv_get(struct mg_state *st, const char *sel, const char *key,
		  char *out, size_t len, const char *what)
{
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	out[0] = 0;
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db, sel, -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC) != SQLITE_OK) {
		ret = sql_err(st, what);
		goto out;
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(s, 0);

		snprintf(out, len, "%s", v ? v : "");
	} else if (rc == SQLITE_DONE) {
		ret = -ENOENT;
	} else {
		ret = sql_err(st, what);
	}
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int mg_state_put_owner(struct mg_state *st, const char *id,
		       const char *domain)
{
	if (!id || strlen(id) >= MG_ID_LEN ||
	    (domain && strlen(domain) >= MG_ID_LEN))
		return -EINVAL;
	return kv_put(st, "INSERT OR REPLACE INTO vm_owner(id, domain, updated_ms)"
		      " VALUES (?1, ?2, ?3)",
		      "DELETE FROM vm_owner WHERE id = ?1", id, domain,
		      "put owner");
}

int mg_state_get_owner(struct mg_state *st, const char *id,
		       char domain[MG_ID_LEN])
{
	return kv_get(st, "SELECT domain FROM vm_owner WHERE id = ?1", id,
		      domain, MG_ID_LEN, "get owner");
}

int mg_state_put_report(struct mg_state *st, const char *domain,
			const char *reason)
{
	if (!domain || strlen(domain) >= MG_ID_LEN ||
	    (reason && strlen(reason) >= MG_WHY_LEN))
		return -EINVAL;
	return kv_put(st, "INSERT OR REPLACE INTO domain_report(domain, reason, updated_ms)"
		      " VALUES (?1, ?2, ?3)",
		      "DELETE FROM domain_report WHERE domain = ?1", domain,
		      reason, "put report");
}

int mg_state_get_report(struct mg_state *st, const char *domain,
			char reason[MG_WHY_LEN])
{
	return kv_get(st, "SELECT reason FROM domain_report WHERE domain = ?1",
		      domain, reason, MG_WHY_LEN, "get report");
}

int mg_state_add_events(struct mg_state *st, const struct mg_event *ev,
			size_t n)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int ret = 0;

	if (!n)
		return 0;
	pthread_mutex_lock(&st->lock);
	if (exec(st, "BEGIN IMMEDIATE")) {
		ret = -EIO;
		goto out_unlock;
	}
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO events(id, ts_ms, type, vm, detail)"
			       " VALUES (?1, ?2, ?3, ?4, ?5)", -1, &s,
			       NULL) != SQLITE_OK) {
		ret = sql_err(st, "add events");
		goto out_rollback;
	}
	for (i = 0; i < n; i++) {
		if (ev[i].id > (uint64_t)INT64_MAX ||
		    sqlite3_bind_int64(s, 1, (sqlite3_int64)ev[i].id) != SQLITE_OK ||
		    sqlite3_bind_int64(s, 2, ev[i].ts_ms) != SQLITE_OK ||
		    sqlite3_bind_text(s, 3, ev[i].type, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_bind_text(s, 4, ev[i].vm, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_bind_text(s, 5, ev[i].detail, -1, SQLITE_STATIC) != SQLITE_OK ||
		    sqlite3_step(s) != SQLITE_DONE) {
			ret = sql_err(st, "add event");
			goto out_rollback;
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	s = NULL;
	if (!exec(st, "COMMIT"))
		goto out_unlock;
	ret = -EIO;
out_rollback:
	sqlite3_finalize(s);
	exec(st, "ROLLBACK");
out_unlock:
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int mg_state_events_since(struct mg_state *st, uint64_t after_id, size_t max,
			  struct mg_event **out, size_t *n)
{
	struct mg_event *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	sqlite3_stmt *s = NULL;
	int ret = 0, rc;

	if (!max)
		return -EINVAL;
	if (after_id > (uint64_t)INT64_MAX) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	if (max > 1000000)
		max = 1000000;
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db,
			       "SELECT id, ts_ms, type, vm, detail FROM events"
			       " WHERE id > ?1 ORDER BY id LIMIT ?2", -1, &s,
			       NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 1, (sqlite3_int64)after_id) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 2, (sqlite3_int64)max) != SQLITE_OK) {
		ret = sql_err(st, "events since");
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct mg_event *e;
		const char *t;

		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				goto out;
			}
			v = nv;
		}
		e = &v[cnt++];
		memset(e, 0, sizeof(*e));
		e->id = (uint64_t)sqlite3_column_int64(s, 0);
		e->ts_ms = sqlite3_column_int64(s, 1);
		t = (const char *)sqlite3_column_text(s, 2);
		snprintf(e->type, sizeof(e->type), "%s", t ? t : "");
		t = (const char *)sqlite3_column_text(s, 3);
		snprintf(e->vm, sizeof(e->vm), "%s", t ? t : "");
		t = (const char *)sqlite3_column_text(s, 4);
		snprintf(e->detail, sizeof(e->detail), "%s", t ? t : "{}");
	}
	if (rc != SQLITE_DONE)
		ret = sql_err(st, "events since");
out:
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int mg_state_last_event_id(struct mg_state *st, uint64_t *id)
{
	sqlite3_stmt *s = NULL;
	int ret = 0;

	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db, "SELECT coalesce(max(id), 0) FROM events",
			       -1, &s, NULL) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW)
		ret = sql_err(st, "last event id");
	else
		*id = (uint64_t)sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return ret;
}

int mg_state_prune_events(struct mg_state *st, uint64_t keep)
{
	sqlite3_stmt *s = NULL;
	int ret = 0;

	if (keep > (uint64_t)INT64_MAX)
		return 0;
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db,
			       "DELETE FROM events WHERE id <= (SELECT"
			       " coalesce(max(id), 0) FROM events) - ?1", -1, &s,
			       NULL) != SQLITE_OK ||
	    sqlite3_bind_int64(s, 1, (sqlite3_int64)keep) != SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_DONE)
		ret = sql_err(st, "prune events");
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return ret;
}
