// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mgmtd configuration (config.h): defaults, the key=value file, flags.
 * One table of keys serves the file and the flags, so every setting can be
 * given either way and --help lists them all.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "policy/policy.h"
#include "lib/util/size.h"

enum key_type { K_STR, K_U32, K_SIZE, K_BOOL, K_SPECIAL };

struct key {
	const char *name;
	enum key_type type;
	size_t off;		/* into struct mg_config (K_STR/K_U32/K_SIZE/K_BOOL) */
	uint64_t lo, hi;	/* K_U32 / K_SIZE range */
	const char *help;
};

#define OFF(f) offsetof(struct mg_config, f)

static const struct key keys[] = {
	{ "state_db", K_STR, OFF(state_db), 0, 0,
	  "SQLite state database (default /var/lib/vgmem/mgmtd.db)" },
	{ "log_level", K_SPECIAL, 0, 0, 0, "error | warn | info | debug" },
	{ "backend", K_SPECIAL, 0, 0, 0,
	  "auto | embedded | netlink (auto: netlink if vgmem.ko is loaded)" },
	{ "embedded_gpus", K_U32, OFF(embedded_gpus), 1, 8,
	  "embedded backend: number of software GPUs (1)" },
	{ "embedded_vram", K_SIZE, OFF(embedded_vram), 1ull << 20, 1ull << 40,
	  "embedded backend: VRAM per GPU (1G)" },
	{ "embedded_host_budget", K_SIZE, OFF(embedded_host_budget), 0,
	  1ull << 42, "embedded backend: host RAM for relocated memory (0: unlimited)" },
	{ "embedded_chunk", K_SIZE, OFF(embedded_chunk), 0, 64ull << 20,
	  "embedded backend: chunk size (0: 2M)" },
	{ "embedded_vm", K_SPECIAL, 0, 0, 0,
	  "NAME:UUID:QUOTA[:GPU] a VM without libvirt (repeatable)" },
	{ "policy", K_SPECIAL, 0, 0, 0, "victim chunk policy: random | lra | cold (default cold)" },
	{ "return_interval_ms", K_U32, OFF(knobs.return_interval_ms),
	  VGMEM_RETURN_MS_MIN, VGMEM_RETURN_MS_MAX,
	  "return worker period (50)" },
	{ "oversub_pct", K_U32, OFF(knobs.oversub_pct), VGP_OVERSUB_MIN,
	  VGP_OVERSUB_MAX, "sum of quotas <= VRAM * pct / 100 (200)" },
	{ "thrash_window_s", K_U32, OFF(knobs.thrash_window_s), 1, 86400,
	  "seconds of relocation above entitlement before an advisory (60)" },
	{ "recompute_ms", K_U32, OFF(recompute_ms), 10, 3600000,
	  "period of demand-driven entitlement recomputation (1000)" },
	{ "hold_spare", K_BOOL, OFF(hold_spare), 0, 0,
	  "never entitle VRAM beyond demand (false)" },
	{ "adopt_mdevs", K_BOOL, OFF(adopt_mdevs), 0, 0,
	  "without libvirt: every vGPU the backend has is a VM, by mdev UUID (false)" },
	{ "libvirt_uri", K_STR, OFF(libvirt_uri), 0, 0,
	  "libvirt connection (qemu:///system; none: off)" },
	{ "migrate_uri", K_STR, OFF(migrate_uri), 0, 0,
	  "live-migrate thrashing domains there (unset: advisory only)" },
	{ "migrate_data_uri", K_STR, OFF(migrate_data_uri), 0, 0,
	  "where QEMU sends a migration's data, e.g. tcp://10.0.0.2 (unset: libvirt's choice)" },
	{ "listen_unix", K_STR, OFF(listen_unix), 0, 0,
	  "REST unix socket (/run/vgmem/mgmtd.sock; empty: none)" },
	{ "unix_group", K_STR, OFF(unix_group), 0, 0, "group of the unix socket" },
	{ "unix_mode", K_SPECIAL, 0, 0, 0, "octal mode of the unix socket (0660)" },
	{ "listen_tcp", K_STR, OFF(listen_tcp), 0, 0,
	  "HOST:PORT for REST over TCP (needs token_file)" },
	{ "token_file", K_STR, OFF(token_file), 0, 0, "bearer token for TCP clients" },
	{ "max_request_bytes", K_U32, OFF(max_request_bytes), 256, 16u << 20,
	  "largest request body (65536)" },
	{ "request_timeout_s", K_U32, OFF(request_timeout_s), 1, 3600,
	  "REST connection timeout (10)" },
	{ "rest_threads", K_U32, OFF(rest_threads), 1, 64,
	  "REST worker threads (4)" },
};

#define NR_KEYS (sizeof(keys) / sizeof(keys[0]))

static int errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int set_str(char **dst, const char *val)
{
	char *s = strdup(val);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int mg_config_defaults(struct mg_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->log_level = MG_LOG_INFO;
	cfg->backend = MG_BACKEND_AUTO;
	cfg->embedded_gpus = 1;
	cfg->embedded_vram = 1ull << 30;
	snprintf(cfg->knobs.policy, sizeof(cfg->knobs.policy), "cold");
	cfg->knobs.return_interval_ms = 50;
	cfg->knobs.oversub_pct = 200;
	cfg->knobs.thrash_window_s = 60;
	cfg->recompute_ms = 1000;
	cfg->unix_mode = 0660;
	cfg->max_request_bytes = 65536;
	cfg->request_timeout_s = 10;
	cfg->rest_threads = 4;
	if (set_str(&cfg->state_db, "/var/lib/vgmem/mgmtd.db") ||
	    set_str(&cfg->libvirt_uri, "qemu:///system") ||
	    set_str(&cfg->listen_unix, "/run/vgmem/mgmtd.sock")) {
		mg_config_free(cfg);
		return -ENOMEM;
	}
	return 0;
}

void mg_config_free(struct mg_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->config_file);
	free(cfg->state_db);
	free(cfg->libvirt_uri);
	free(cfg->migrate_uri);
	free(cfg->migrate_data_uri);
	free(cfg->listen_unix);
	free(cfg->unix_group);
	free(cfg->listen_tcp);
	free(cfg->token_file);
	memset(cfg, 0, sizeof(*cfg));
}

/* The config file's and domain XML's size syntax: size.h, VG_SIZE_MGMT. */
int mg_parse_size(const char *s, uint64_t *out)
{
	return vg_parse_size(s, VG_SIZE_MGMT, out);
}

bool mg_uuid_valid(const char *s)
{
	size_t i;

	if (!s || strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!isdigit((unsigned char)s[i]) &&
			   !(s[i] >= 'a' && s[i] <= 'f')) {
			return false;
		}
	}
	return true;
}

int mg_parse_embedded_vm(const char *s, struct mg_embedded_vm *vm)
{
	char buf[256], *name, *id, *quota, *gpu, *end;
	unsigned long g;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	name = buf;
	id = strchr(name, ':');
	if (!id)
		return -EINVAL;
	*id++ = 0;
	quota = strchr(id, ':');
	if (!quota)
		return -EINVAL;
	*quota++ = 0;
	gpu = strchr(quota, ':');
	if (gpu)
		*gpu++ = 0;
	if (!*name || strlen(name) >= sizeof(vm->name) || !mg_uuid_valid(id))
		return -EINVAL;
	memset(vm, 0, sizeof(*vm));
	if (mg_parse_size(quota, &vm->quota) || !vm->quota)
		return -EINVAL;
	vm->gpu = -1;
	if (gpu) {
		errno = 0;
		g = strtoul(gpu, &end, 10);
		if (errno || end == gpu || *end || g > 7)
			return -EINVAL;
		vm->gpu = (int)g;
	}
	memcpy(vm->name, name, strlen(name) + 1);	/* lengths checked above */
	memcpy(vm->id, id, 37);
	return 0;
}

static const struct key *find_key(const char *name)
{
	char norm[64];
	size_t i;

	if (strlen(name) >= sizeof(norm))
		return NULL;
	for (i = 0; name[i]; i++)
		norm[i] = name[i] == '-' ? '_' : name[i];
	norm[i] = 0;
	for (i = 0; i < NR_KEYS; i++)
		if (!strcmp(keys[i].name, norm))
			return &keys[i];
	return NULL;
}

static int parse_u64(const char *val, uint64_t *out)
{
	char *end;

	if (!*val || !isdigit((unsigned char)*val))
		return -EINVAL;
	errno = 0;
	*out = strtoull(val, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int set_special(struct mg_config *cfg, const struct key *k,
		       const char *val, char *err, size_t errlen)
{
	unsigned long mode;
	char *end;

	if (!strcmp(k->name, "log_level")) {
		if (mg_log_parse_level(val, &cfg->log_level))
			return errf(err, errlen, "log_level: '%s' is not error, warn, info or debug", val);
	} else if (!strcmp(k->name, "backend")) {
		if (!strcmp(val, "auto"))
			cfg->backend = MG_BACKEND_AUTO;
		else if (!strcmp(val, "embedded"))
			cfg->backend = MG_BACKEND_EMBEDDED;
		else if (!strcmp(val, "netlink"))
			cfg->backend = MG_BACKEND_NETLINK;
		else
			return errf(err, errlen, "backend: '%s' is not auto, embedded or netlink", val);
	} else if (!strcmp(k->name, "embedded_vm")) {
		struct mg_embedded_vm vm;
		size_t i;

		if (mg_parse_embedded_vm(val, &vm))
			return errf(err, errlen, "embedded_vm: '%s' is not NAME:UUID:QUOTA[:GPU] (lower-case UUID, QUOTA > 0)", val);
		for (i = 0; i < cfg->nr_embedded_vms; i++)
			if (!strcmp(cfg->embedded_vms[i].id, vm.id) ||
			    !strcmp(cfg->embedded_vms[i].name, vm.name))
				return errf(err, errlen, "embedded_vm: '%s' repeats a name or UUID", val);
		if (cfg->nr_embedded_vms >= MG_MAX_EMBEDDED_VMS)
			return errf(err, errlen, "embedded_vm: more than %d", MG_MAX_EMBEDDED_VMS);
		cfg->embedded_vms[cfg->nr_embedded_vms++] = vm;
	} else if (!strcmp(k->name, "policy")) {
		if (strcmp(val, "random") && strcmp(val, "lra") && strcmp(val, "cold"))
			return errf(err, errlen, "policy: '%s' is not random, lra or cold", val);
		/*
		 * The whole array: no bytes of an earlier, longer name stay
		 * behind it (the knobs are compared and stored as a block).
		 */
		memset(cfg->knobs.policy, 0, sizeof(cfg->knobs.policy));
		snprintf(cfg->knobs.policy, sizeof(cfg->knobs.policy), "%s", val);
	} else if (!strcmp(k->name, "unix_mode")) {
		errno = 0;
		mode = strtoul(val, &end, 8);
		if (errno || end == val || *end || mode > 0777)
			return errf(err, errlen, "unix_mode: '%s' is not an octal mode", val);
		cfg->unix_mode = (uint32_t)mode;
	}
	return 0;
}

int mg_config_set(struct mg_config *cfg, const char *key, const char *val,
		  char *err, size_t errlen)
{
	const struct key *k = find_key(key);
	void *p;
	uint64_t v;

	if (!k)
		return errf(err, errlen, "unknown setting '%s'", key);
	if (!val)
		return errf(err, errlen, "%s: needs a value", k->name);
	p = (char *)cfg + k->off;
	switch (k->type) {
	case K_STR:
		return set_str(p, val) ? -ENOMEM : 0;
	case K_U32:
		if (parse_u64(val, &v) || v < k->lo || v > k->hi)
			return errf(err, errlen, "%s: '%s' is not an integer in %llu..%llu",
				    k->name, val, (unsigned long long)k->lo,
				    (unsigned long long)k->hi);
		*(uint32_t *)p = (uint32_t)v;
		return 0;
	case K_SIZE:
		if (mg_parse_size(val, &v) || v < k->lo || v > k->hi)
			return errf(err, errlen, "%s: '%s' is not a size in %llu..%llu bytes (e.g. 8G, 512MiB, 2GB)",
				    k->name, val, (unsigned long long)k->lo,
				    (unsigned long long)k->hi);
		*(uint64_t *)p = v;
		return 0;
	case K_BOOL:
		if (!strcmp(val, "true") || !strcmp(val, "yes") || !strcmp(val, "1"))
			*(bool *)p = true;
		else if (!strcmp(val, "false") || !strcmp(val, "no") || !strcmp(val, "0"))
			*(bool *)p = false;
		else
			return errf(err, errlen, "%s: '%s' is not true or false", k->name, val);
		return 0;
	case K_SPECIAL:
		return set_special(cfg, k, val, err, errlen);
	}
	return errf(err, errlen, "%s: bad key type", k->name);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int mg_config_load_file(struct mg_config *cfg, const char *path, char *err,
			size_t errlen)
{
	char line[1024], sub[512];
	unsigned int lineno = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = errf(err, errlen, "%s:%u: line too long", path, lineno);
			break;
		}
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			if (s[strlen(s) - 1] != ']') {
				ret = errf(err, errlen, "%s:%u: bad section header", path, lineno);
				break;
			}
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			ret = errf(err, errlen, "%s:%u: expected key = value", path, lineno);
			break;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		if (strlen(val) >= 2 && val[0] == '"' && val[strlen(val) - 1] == '"') {
			val[strlen(val) - 1] = 0;
			val++;
		}
		ret = mg_config_set(cfg, key, val, sub, sizeof(sub));
		if (ret) {
			if (ret == -EINVAL)
				errf(err, errlen, "%s:%u: %s", path, lineno, sub);
			break;
		}
	}
	fclose(f);
	return ret;
}

int mg_config_parse_args(struct mg_config *cfg, int argc, char **argv,
			 char *err, size_t errlen)
{
	int i, ret;

	/* The file first, so that flags override it wherever they appear. */
	for (i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strncmp(argv[i], "--config=", 9))
			v = argv[i] + 9;
		else if (!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c")) {
			if (i + 1 >= argc)
				return errf(err, errlen, "%s needs a file", argv[i]);
			v = argv[++i];
		}
		if (v) {
			if (set_str(&cfg->config_file, v))
				return -ENOMEM;
			ret = mg_config_load_file(cfg, v, err, errlen);
			if (ret)
				return ret == -EINVAL ? ret : -EINVAL;
		}
	}
	for (i = 1; i < argc; i++) {
		char key[64];
		const char *a = argv[i], *val;
		const char *eq;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cfg->help = true;
			continue;
		}
		if (!strcmp(a, "--version")) {
			cfg->version = true;
			continue;
		}
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			cfg->log_level = MG_LOG_DEBUG;
			continue;
		}
		if (!strcmp(a, "--config") || !strcmp(a, "-c")) {
			i++;
			continue;
		}
		if (!strncmp(a, "--config=", 9))
			continue;
		if (strncmp(a, "--", 2) || !a[2])
			return errf(err, errlen, "unexpected argument '%s' (see --help)", a);
		a += 2;
		eq = strchr(a, '=');
		if (eq) {
			if ((size_t)(eq - a) >= sizeof(key))
				return errf(err, errlen, "unknown option '--%s'", a);
			memcpy(key, a, eq - a);
			key[eq - a] = 0;
			val = eq + 1;
		} else {
			const struct key *k;

			if (strlen(a) >= sizeof(key))
				return errf(err, errlen, "unknown option '--%s'", a);
			strcpy(key, a);
			k = find_key(key);
			if (k && k->type == K_BOOL &&
			    (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))) {
				val = "true";	/* --hold-spare alone */
			} else {
				if (i + 1 >= argc)
					return errf(err, errlen, "--%s needs a value", key);
				val = argv[++i];
			}
		}
		ret = mg_config_set(cfg, key, val, err, errlen);
		if (ret)
			return ret;
	}
	/* Settings that make sense only together, whichever set them. */
	if (cfg->listen_tcp && cfg->listen_tcp[0] &&
	    !(cfg->token_file && cfg->token_file[0]))
		return errf(err, errlen,
			    "listen_tcp %s needs token_file: REST over TCP serves only clients with its bearer token",
			    cfg->listen_tcp);
	return 0;
}

void mg_config_usage(FILE *f, const char *argv0)
{
	size_t i;

	fprintf(f,
		"Usage: %s [--config FILE] [--KEY VALUE | --KEY=VALUE]...\n"
		"vgmem management daemon: fair-share GPU memory policy, REST API,\n"
		"libvirt integration. Every KEY may also be set as 'key = value' in\n"
		"the config file; flags override the file.\n\n"
		"  -c, --config FILE         read settings from FILE\n"
		"  -v, --verbose             log_level=debug\n"
		"  -h, --help                this text\n"
		"      --version             print the version\n", argv0);
	for (i = 0; i < NR_KEYS; i++) {
		char flag[64];
		size_t j;

		snprintf(flag, sizeof(flag), "--%s", keys[i].name);
		for (j = 2; flag[j]; j++)
			if (flag[j] == '_')
				flag[j] = '-';
		fprintf(f, "      %-26s%s\n", flag, keys[i].help);
	}
}
