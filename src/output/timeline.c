/*
 * timeline.c - rows per (channel, hour) in an open-addressing hash table
 * (see timeline.h).
 */
#include "output/timeline.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot {
    int64_t hour;
    uint64_t count;     /* 0: an empty slot */
    uint32_t channel;
} slot;

struct timeline {
    char *channel[TIMELINE_MAX_CHANNELS + 1];
    size_t n_channels;
    slot *slots;
    size_t cap;         /* a power of two */
    size_t used;
    uint64_t rows;
    uint64_t uncharted;
    bool any;
    int64_t first, last;
};

timeline *timeline_new(void)
{
    return calloc(1, sizeof(timeline));
}

void timeline_free(timeline **tlp)
{
    timeline *tl = *tlp;
    if (!tl)
        return;
    for (size_t i = 0; i < tl->n_channels; i++)
        free(tl->channel[i]);
    free(tl->slots);
    free(tl);
    *tlp = NULL;
}

static int64_t hour_of(int64_t us)
{
    int64_t h = us / TIMELINE_HOUR_US;
    if (us % TIMELINE_HOUR_US < 0)
        h--;
    return h;
}

static size_t slot_hash(uint32_t ch, int64_t hour, size_t mask)
{
    uint64_t x = (uint64_t)hour * UINT64_C(0x9E3779B97F4A7C15) ^ ((uint64_t)ch << 48);
    x ^= x >> 29;
    return (size_t)(x & mask);
}

static bool grow(timeline *tl)
{
    size_t cap = tl->cap ? tl->cap * 2 : 256;
    slot *s = calloc(cap, sizeof *s);
    if (!s)
        return false;
    for (size_t i = 0; i < tl->cap; i++) {
        if (!tl->slots[i].count)
            continue;
        size_t k = slot_hash(tl->slots[i].channel, tl->slots[i].hour, cap - 1);
        while (s[k].count)
            k = (k + 1) & (cap - 1);
        s[k] = tl->slots[i];
    }
    free(tl->slots);
    tl->slots = s;
    tl->cap = cap;
    return true;
}

/* The channel's index; channels past the limit share the last one. */
static bool channel_index(timeline *tl, const char *name, size_t len, uint32_t *out)
{
    for (size_t i = 0; i < tl->n_channels; i++) {
        const char *c = tl->channel[i];
        if (strlen(c) == len && memcmp(c, name, len) == 0) {
            *out = (uint32_t)i;
            return true;
        }
    }
    if (tl->n_channels == TIMELINE_MAX_CHANNELS) {
        for (size_t i = 0; i < tl->n_channels; i++)
            if (strcmp(tl->channel[i], TIMELINE_OTHER) == 0) {
                *out = (uint32_t)i;
                return true;
            }
        name = TIMELINE_OTHER;
        len = strlen(TIMELINE_OTHER);
        /* the last place is kept for the others */
        free(tl->channel[tl->n_channels - 1]);
        tl->n_channels--;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return false;
    memcpy(copy, name, len);
    copy[len] = '\0';
    tl->channel[tl->n_channels] = copy;
    *out = (uint32_t)tl->n_channels++;
    return true;
}

bool timeline_add(timeline *tl, const char *channel, size_t len, int64_t received_us)
{
    uint32_t ch;
    if ((tl->used + 1) * 4 > tl->cap * 3 && !grow(tl)) {
        tl->uncharted++;
        return false;
    }
    if (!channel_index(tl, channel, len, &ch)) {
        tl->uncharted++;
        return false;
    }
    int64_t hour = hour_of(received_us);
    size_t mask = tl->cap - 1;
    size_t k = slot_hash(ch, hour, mask);
    while (tl->slots[k].count && (tl->slots[k].channel != ch || tl->slots[k].hour != hour))
        k = (k + 1) & mask;
    if (!tl->slots[k].count) {
        tl->slots[k].channel = ch;
        tl->slots[k].hour = hour;
        tl->used++;
    }
    tl->slots[k].count++;
    tl->rows++;
    if (!tl->any || hour < tl->first)
        tl->first = hour;
    if (!tl->any || hour > tl->last)
        tl->last = hour;
    tl->any = true;
    return true;
}

uint64_t timeline_uncharted(const timeline *tl)
{
    return tl->uncharted;
}

size_t timeline_channels(const timeline *tl)
{
    return tl->n_channels;
}

const char *timeline_channel(const timeline *tl, size_t i)
{
    return i < tl->n_channels ? tl->channel[i] : "";
}

bool timeline_range(const timeline *tl, int64_t *first_hour, int64_t *last_hour)
{
    *first_hour = tl->first;
    *last_hour = tl->last;
    return tl->any;
}

void timeline_buckets(const timeline *tl, size_t ch, int64_t first_hour, int64_t bucket_hours,
                      uint64_t *out, size_t n_buckets)
{
    memset(out, 0, n_buckets * sizeof *out);
    if (bucket_hours <= 0)
        return;
    for (size_t i = 0; i < tl->cap; i++) {
        const slot *s = &tl->slots[i];
        if (!s->count || s->channel != ch || s->hour < first_hour)
            continue;
        uint64_t k = (uint64_t)(s->hour - first_hour) / (uint64_t)bucket_hours;
        if (k < n_buckets)
            out[k] += s->count;
    }
}
