/* Internal to libsamebits: a run on the batch axis (batch_run.c). */
#ifndef SB_BATCH_RUN_H
#define SB_BATCH_RUN_H

#include "sb_harness.h"

/* The case's samples computed in batches of c->run_batch, into the sink:
 * the trace of the batch axis (harness/FORMATS.md, "Batch-axis traces"). */
sb_status sb_run_batch(const sb_case *c, const sb_run_options *o, sb_run_sink *sink, char *err,
                       size_t errlen);

#endif
