/*
 * config.c - the defaults of every option (see config.h).
 */
#include "core/config.h"

#include <string.h>

void config_defaults(config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->table = DEFAULT_TABLE;
    cfg->format = FORMAT_AUTO;
    cfg->delimiter = ',';
    cfg->rejects_path = DEFAULT_REJECTS;
    cfg->max_rejects = -1;
    cfg->chunk_rows = DEFAULT_CHUNK_ROWS;
    cfg->conflict = CONFLICT_UPDATE;
    cfg->final_status[0] = DEFAULT_FINAL_STATUS;
    cfg->n_final_status = 1;
    cfg->retries = 5;
    cfg->jobs = DEFAULT_JOBS;
    cfg->batch_size = 1000;
    cfg->limit = 20;
    cfg->cancel_wait_ms = 10000;
}
