/* The resume hook of a user's kernel (user_resume.h): the steps its run
 * function runs, and its checkpoint file, a header of three lines then the
 * kernel's own bytes (harness/examples/README.md, "Resuming"):
 *
 *     samebits-user-checkpoint 1
 *     kernel <name> <digest>
 *     step <K>
 *     <what the kernel's save wrote> */
#include <inttypes.h>
#include <string.h>

#include "support/support.h"
#include "user/user_resume.h"

#define MAGIC "samebits-user-checkpoint"
#define VERSION 1

sb_user_steps sb_user_run_steps(void *probe_ctx)
{
    user_probe_ctx *u = probe_ctx;
    u->steps_asked = true;
    return u->steps;
}

void sb_user_probe(void *ctx, const sb_probe_point *p)
{
    user_probe_ctx *u = ctx;
    bool inside = p->step >= u->steps.first && p->step < u->steps.end;
    if (u->check_steps && !inside && !u->stray_probe[0]) {
        u->stray_step = p->step;
        snprintf(u->stray_probe, sizeof u->stray_probe, "%s", p->name ? p->name : "");
    }
    sb_run_sink_probe(&u->sink, p);
}

sb_status sb_user_checkpoint_save(const sb_user_kernel *k, const sb_case *c, const char *path,
                                  int64_t step, char *err, size_t errlen)
{
    sb_out_file o;
    sb_status st = sb_out_open(&o, path, err, errlen);
    if (st != SB_OK)
        return st;
    fprintf(o.f, "%s %d\nkernel %s %s\nstep %" PRId64 "\n", MAGIC, VERSION, c->name, c->digest,
            step);
    st = k->save(k->ctx, o.f);
    if (st != SB_OK) {
        sb_out_discard(&o);
        sb_err_set(err, errlen, "%s: the kernel's save failed (%s)", path, sb_status_name(st));
        return st;
    }
    return sb_out_commit(&o, err, errlen);
}

/* The header's three lines, checked against kernel c; *step read. */
static sb_status header_read(FILE *f, const sb_case *c, const char *path, int64_t *step,
                             char *err, size_t errlen)
{
    char magic[64] = "", name[sizeof c->name] = "", digest[40] = "";
    int version = 0;
    long long k = 0;
    if (fscanf(f, "%63s %d", magic, &version) != 2 || strcmp(magic, MAGIC) != 0) {
        sb_err_set(err, errlen, "%s: not a samebits user checkpoint (no \"%s %d\" line)", path,
                   MAGIC, VERSION);
        return SB_ERR_INPUT;
    }
    if (version != VERSION) {
        sb_err_set(err, errlen, "%s: user checkpoint format version %d; this samebits reads "
                   "version %d", path, version, VERSION);
        return SB_ERR_INPUT;
    }
    if (fscanf(f, " kernel %127s %39s step %lld", name, digest, &k) != 3 || fgetc(f) != '\n') {
        sb_err_set(err, errlen, "%s: the header ends early (kernel, step)", path);
        return SB_ERR_INPUT;
    }
    if (strcmp(name, c->name) != 0 || strcmp(digest, c->digest) != 0) {
        sb_err_set(err, errlen, "%s: a checkpoint of kernel %s (digest %s), not of %s "
                   "(digest %s)", path, name, digest, c->name, c->digest);
        return SB_ERR_INPUT;
    }
    if (k < 1 || k >= c->user_steps) {
        sb_err_set(err, errlen, "%s: step %lld, outside 1..%" PRId64 " of kernel %s's run",
                   path, k, c->user_steps - 1, c->name);
        return SB_ERR_INPUT;
    }
    *step = k;
    return SB_OK;
}

sb_status sb_user_checkpoint_restore(const sb_user_kernel *k, const sb_case *c,
                                     const char *path, int64_t *step, char *err,
                                     size_t errlen)
{
    FILE *f = sb_input_open(path, "rb", err, errlen);
    if (!f)
        return SB_ERR_INPUT;
    sb_status st = header_read(f, c, path, step, err, errlen);
    if (st == SB_OK && (st = k->restore(k->ctx, f)) != SB_OK) {
        sb_err_set(err, errlen, "%s: the kernel's restore refused it (%s)", path,
                   sb_status_name(st));
        st = SB_ERR_INPUT;
    }
    if (st == SB_OK && fgetc(f) != EOF) {
        sb_err_set(err, errlen, "%s: bytes after the kernel's state (its restore read less "
                   "than its save wrote)", path);
        st = SB_ERR_INPUT;
    }
    fclose(f);
    return st;
}
