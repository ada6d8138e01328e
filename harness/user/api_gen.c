/* The reference of the kernel list's bound functions and probe helpers,
 * made from kernels.def so that no table of them is kept by hand:
 *
 *   api_gen header            include/samebits/sb_op_probes.h: every
 *                             sb_<op>_bound and sb_probe_<op>, declared
 *   api_gen markdown KERNELS  harness/examples/API.md: the same with each
 *                             op's tensors, roles and layouts (the shapes
 *                             block of KERNELS, kernels/kernels.def)
 *
 * The test `api_reference` compares both with the committed files. The
 * declarations are the op's signature (kernels.def) as it is written there,
 * so a compiler that sees them beside the definitions (harness/user/
 * probe_ops.c, kernels/<area>/<area>_bound.c) refuses any that differ. */
#include <stdio.h>
#include <string.h>

#include "sb_kernels.h"

typedef struct op_text {
    const char *name, *area, *bound, *signature;
} op_text;

static const op_text ops[SB_OP_COUNT] = {
#define SB_OP(name, area, params, outputs, inputs, bound, loose, hashed, refd, signature) \
    [SB_OP_##name] = {#name, #area, #bound, #signature},
#include "kernels.def"
#undef SB_OP
};

/* The signature without its parentheses: "float *y, const float *x, ...". */
static void params_of(const op_text *o, char *out, size_t len)
{
    snprintf(out, len, "%.*s", (int)strlen(o->signature) - 2, o->signature + 1);
}

/* The name of parameter i of the signature ("y", "dx", ...). */
static void param_name(const op_text *o, int i, char *out, size_t len)
{
    const char *p = o->signature + 1;
    for (int k = 0; k < i; k++)
        p = strchr(p, ',') + 1;
    size_t end = strcspn(p, ",)");
    size_t begin = end;
    while (begin > 0 && (p[begin - 1] == '_' || (p[begin - 1] >= 'a' && p[begin - 1] <= 'z') ||
                         (p[begin - 1] >= '0' && p[begin - 1] <= '9')))
        begin--;
    snprintf(out, len, "%.*s", (int)(end - begin), p + begin);
}

static int header(void)
{
    printf("/* Generated from kernels/kernels.def by harness/user/api_gen.c (`api_gen\n"
           " * header`; the test api_reference checks it): do not edit. For each op of\n"
           " * the kernel list, in its order: its reordering bound when it reduces\n"
           " * (sb_kernels.h), and its probe helper (sb_probe_ops.h). The ops' tensors,\n"
           " * roles and layouts are in harness/examples/API.md. */\n"
           "#ifndef SB_OP_PROBES_H\n#define SB_OP_PROBES_H\n");
    for (int op = 0; op < SB_OP_COUNT; op++) {
        const op_text *o = &ops[op];
        char params[512];
        params_of(o, params, sizeof params);
        printf("\n/* %s (kernels/%s/) */\n", o->name, o->area);
        if (strcmp(o->bound, "BOUND") == 0)
            printf("void sb_%s_bound(%s);\n", o->name, params);
        printf("sb_status sb_probe_%s(sb_probes *pc, int64_t step, const char *name,\n"
               "    %s);\n", o->name, params);
    }
    printf("\n#endif\n");
    return 0;
}

/* "`y` (y)" for each tensor of a role list, signature position first. */
static void tensors(const op_text *o, int first, int n, const sb_role *roles)
{
    for (int i = 0; i < n; i++) {
        char name[64];
        param_name(o, first + i, name, sizeof name);
        printf("%s`%s` (%s)", i ? ", " : "", name, sb_role_name(roles[i]));
    }
    if (n == 0)
        printf("none");
}

/* The "Shapes" lines of the kernel list's header comment, as they are. */
static int shapes(const char *kernels_def)
{
    FILE *f = fopen(kernels_def, "r");
    if (!f) {
        fprintf(stderr, "api_gen: %s: cannot open\n", kernels_def);
        return 2;
    }
    char line[512];
    bool in = false;
    int n = 0;
    size_t indent = 0;     /* of the first line, taken off every line */
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "Shapes (NCHW, float32):")) {
            in = true;
            continue;
        }
        if (in && strstr(line, "*/"))
            break;
        if (in) {
            const char *text = line + strspn(line, " *");
            if (n++ == 0)
                indent = (size_t)(text - line);
            printf("    %s", strlen(line) > indent ? line + indent : "\n");
        }
    }
    fclose(f);
    if (n == 0) {
        fprintf(stderr, "api_gen: %s: no \"Shapes (NCHW, float32):\" block\n", kernels_def);
        return 2;
    }
    return 0;
}

static int markdown(const char *kernels_def)
{
    printf("# The kernel list's bounds and probe helpers\n\n"
           "Generated from `kernels/kernels.def` by `harness/user/api_gen.c` (the\n"
           "test `api_reference` checks it): do not edit. Every function here is\n"
           "declared in the installed `sb_op_probes.h`, included by `samebits.h`.\n\n"
           "For each op of the kernel list:\n\n"
           "- `sb_probe_<op>(&pc, step, name, ...)` (`sb_probe_ops.h`) probes the op's\n"
           "  output under `name` after a kernel of yours computed it: the op's name,\n"
           "  its inputs named by their latest probes (by data pointer), its bound.\n"
           "  The arguments after `name` are the op's own, outputs first, then\n"
           "  inputs, then its shape or parameters. An update op probes its first\n"
           "  output, the parameter, with the gradient and the parameter's previous\n"
           "  probe as inputs; its other outputs (the optimiser's state) are not read\n"
           "  and may be NULL.\n"
           "- `sb_<op>_bound(bound, ...)`, for an op that reduces: the same arguments,\n"
           "  the first output replaced by `bound`, which receives per element how far\n"
           "  two summation orders of that element can be apart (`harness/examples/\n"
           "  README.md`, \"Bounds you can call\"). An op that does not reduce has no\n"
           "  bound: any difference in it is `beyond-bound`.\n\n"
           "An op of your own: `sb_probe_op(&pc, step, name, op, out, n_in, in, bound,\n"
           "bound_ctx)`, with a bound function of your own (`sb_dot_bound(n, abs_sum)`\n"
           "per element for a sum of n terms). Sources (inputs, initial weights):\n"
           "`sb_probe_source(&pc, step, name, sb_f32(data, dims...))`.\n\n"
           "Tensors by role; a gradient has the role of the tensor it is the gradient\n"
           "of. Shapes (row-major, outermost first):\n\n");
    int rc = shapes(kernels_def);
    if (rc != 0)
        return rc;
    for (int op = 0; op < SB_OP_COUNT; op++) {
        const op_text *o = &ops[op];
        sb_op_roles r = sb_op_roles_of((sb_op)op);
        char params[512];
        params_of(o, params, sizeof params);
        printf("\n## %s\n\nkernels/%s/; %s. Outputs: ", o->name, o->area,
               strcmp(o->bound, "BOUND") == 0 ? "reduces" : "no reduction");
        tensors(o, 0, r.n_out, r.out);
        printf("; inputs: ");
        tensors(o, r.n_out, r.n_in, r.in);
        printf(".\n\n```c\n");
        if (strcmp(o->bound, "BOUND") == 0)
            printf("void sb_%s_bound(%s);\n", o->name, params);
        printf("sb_status sb_probe_%s(sb_probes *pc, int64_t step, const char *name,\n"
               "    %s);\n```\n", o->name, params);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "header") == 0)
        return header();
    if (argc == 3 && strcmp(argv[1], "markdown") == 0)
        return markdown(argv[2]);
    fprintf(stderr, "usage: api_gen header | api_gen markdown KERNELS_DEF\n");
    return 2;
}
