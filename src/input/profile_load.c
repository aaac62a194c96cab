/*
 * profile_load.c - where a profile comes from (see profile.h): the
 * built-ins, a profile file, and the command line's overrides (--encoding,
 * --timezone, --delimiter, --kind, --tenant-map) applied before reading.
 *
 * The built-ins are written as profile files and go through the same
 * parser as a user's file (profile_parse.c), so `idemload profiles NAME`
 * prints exactly what `--profile NAME` runs, and a printed profile loads
 * back unchanged.
 */
#include "input/profile.h"
#include "input/profiles_json.h"

#include "input/tenant_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The built-in profiles: their names in the order `profiles` lists them,
 * each with its one-line summary.  The profiles themselves are JSON files,
 * src/input/profiles/NAME.json, compiled in by cmake/embed_profiles.cmake
 * (profile_json_files); a unit test holds the two lists to each other. */
typedef struct builtin {
    const char *name;
    const char *summary;
} builtin;

static const builtin builtins[] = {
    {"wechat-trade",
     "WeChat Pay trade bill (ALL, SUCCESS, REFUND; 27/20/29 and older 24/26 columns); "
     "status from 退款状态; totals checked; merchant column for --tenant-map"},
    {"alipay-trade",
     "Alipay trade bill 业务明细 (the .zip as downloaded, or the GBK detail CSV); "
     "#交易合计/#退款合计 counts and amounts checked"},
    {"stripe-balance",
     "Stripe itemized balance change report (charge and refund rows; created_utc, or "
     "created in --timezone; the Dashboard download too)"},
    {"paypal-stl",
     "PayPal settlement report (STL): SB rows, columns named by the CH row; payments "
     "received (CR) only; SC/RC/FF record counts checked (SF/RF too where they hold "
     "one)"},
    {"stripe-payout",
     "Stripe itemized payout reconciliation report (automatic_payout_id, gross, fee, net); "
     "settle only"},
    {"wechat-fund",
     "WeChat Pay fund-flow bill 资金账单 (BASIC); summary counts and amounts checked; "
     "settle only"},
    {"alipay-account",
     "Alipay account ledger 账务明细 (signcustomer, GBK); #收入合计/#支出合计 checked; "
     "settle only"},
};

#define N_BUILTINS (sizeof builtins / sizeof builtins[0])

const char *const profile_builtin_names[] = {"wechat-trade", "alipay-trade", "stripe-balance",
                                             "paypal-stl", "stripe-payout", "wechat-fund",
                                             "alipay-account", NULL};

const char *profile_builtin_summary(const char *name)
{
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (strcmp(builtins[i].name, name) == 0)
            return builtins[i].summary;
    return NULL;
}

const char *profile_builtin_source(const char *name)
{
    for (size_t i = 0; i < N_BUILTINS; i++)
        if (strcmp(builtins[i].name, name) == 0)
            for (const profile_json *f = profile_json_files; f->name; f++)
                if (strcmp(f->name, name) == 0)
                    return f->text;
    return NULL;
}

profile *profile_builtin(const char *name, buf *err)
{
    const char *json = profile_builtin_source(name);
    if (json)
        return profile_parse(json, strlen(json), name, err);
    buf_printf(err, "no built-in profile '%s' (built-in:", name);
    for (size_t i = 0; i < N_BUILTINS; i++)
        buf_printf(err, " %s", builtins[i].name);
    buf_printf(err, "; or give a profile file PATH.json)");
    return NULL;
}

profile *profile_load_file(const char *path, buf *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        buf_printf(err, "%s: cannot open the profile file: %s", path, strerror(errno));
        return NULL;
    }
    buf text = BUF_INIT;
    char tmp[8192];
    size_t n;
    bool ok = true;
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) {
        if (text.len + n > (1u << 20) || !buf_append(&text, tmp, n)) {
            ok = false;
            break;
        }
    }
    bool rerr = ferror(fp);
    fclose(fp);
    profile *p = NULL;
    if (!ok)
        buf_printf(err, "%s: a profile file is at most 1 MiB", path);
    else if (rerr)
        buf_printf(err, "%s: cannot read the profile file", path);
    else
        p = profile_parse(buf_cstr(&text), text.len, path, err);
    buf_free(&text);
    return p;
}

bool profile_names_file(const char *name_or_path)
{
    size_t n = strlen(name_or_path);
    return strchr(name_or_path, '/') || (n > 5 && strcmp(name_or_path + n - 5, ".json") == 0);
}

profile *profile_load(const char *name_or_path, buf *err)
{
    if (profile_names_file(name_or_path))
        return profile_load_file(name_or_path, err);
    return profile_builtin(name_or_path, err);
}

bool profile_override(profile *p, const char *encoding, const char *timezone, buf *err)
{
    if (encoding) {
        if (strcmp(encoding, "gbk") == 0 || strcmp(encoding, "GBK") == 0)
            p->encoding = PROFILE_GBK;
        else if (strcmp(encoding, "utf-8") == 0 || strcmp(encoding, "UTF-8") == 0 ||
                 strcmp(encoding, "utf8") == 0)
            p->encoding = PROFILE_UTF8;
        else {
            buf_printf(err, "--encoding must be utf-8 or gbk, not '%s'", encoding);
            return false;
        }
    }
    if (timezone) {
        tz_zone z;
        buf why = BUF_INIT;
        if (!tz_resolve(timezone, &z, &why)) {
            buf_printf(err, "--timezone: %s", buf_cstr(&why));
            buf_free(&why);
            return false;
        }
        buf_free(&why);
        char *copy = strdup(timezone);
        if (!copy) {
            tz_free(&z);
            buf_printf(err, "out of memory");
            return false;
        }
        tz_free(&p->tz);
        free(p->timezone);
        p->tz = z;
        p->timezone = copy;
    }
    return true;
}

void profile_override_delimiter(profile *p, char delimiter)
{
    p->delimiter = delimiter;
}

bool profile_add_kind_rename(profile *p, const char *from, const char *to, buf *err)
{
    if (!*from || strchr(from, ':') || !*to) {
        buf_printf(err, "--kind takes FROM=TO, a kind without ':' and its new name (--kind "
                        "pay=pay_success); got '%s=%s'", from, to);
        return false;
    }
    for (size_t i = 0; i < p->n_renames; i++)
        if (strcmp(p->renames[i].from, from) == 0) {
            buf_printf(err, "--kind %s is given twice", from);
            return false;
        }
    profile_kind_rename *n = realloc(p->renames, (p->n_renames + 1) * sizeof *n);
    if (!n) {
        buf_printf(err, "out of memory");
        return false;
    }
    p->renames = n;
    char *f = strdup(from), *t = strdup(to);
    if (!f || !t) {
        free(f);
        free(t);
        buf_printf(err, "out of memory");
        return false;
    }
    p->renames[p->n_renames++] = (profile_kind_rename){f, t};
    return true;
}

bool profile_set_tenant_map(profile *p, struct tenant_map *map, const char *path, buf *err)
{
    if (p->n_merchant_from == 0) {
        tenant_map_free(&map);
        buf_printf(err, "--tenant-map: profile %s names no merchant column (add a \"merchant\" "
                        "member to a custom profile)", p->name);
        return false;
    }
    char *copy = strdup(path);
    if (!copy) {
        tenant_map_free(&map);
        buf_printf(err, "out of memory");
        return false;
    }
    tenant_map_free(&p->tenants);
    free(p->tenant_map_path);
    p->tenants = map;
    p->tenant_map_path = copy;
    return true;
}
