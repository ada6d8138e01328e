/* The fuzz targets' shared pieces (fuzz.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

const char *fuzz_path(const char *name)
{
    static char dir[256];
    static char path[4][512];
    static const char *names[4];
    if (dir[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/samebits-fuzz.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        fuzz_require(mkdtemp(dir) != NULL, "cannot create a directory for the inputs");
    }
    for (int i = 0; i < 4; i++) {
        if (names[i] == NULL) {
            names[i] = name;
            snprintf(path[i], sizeof path[i], "%s/%s", dir, name);
        }
        if (strcmp(names[i], name) == 0)
            return path[i];
    }
    fuzz_require(0, "more than 4 input files");
    return NULL;
}

void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    fuzz_require(f != NULL, "cannot write the input file");
    fuzz_require(fwrite(data, 1, size, f) == size && fclose(f) == 0,
                 "cannot write the input file");
}

uint8_t *fuzz_read(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    fuzz_require(f != NULL, "cannot read back a written file");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *buf = malloc((size_t)n + 1);
    fuzz_require(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n,
                 "cannot read back a written file");
    fclose(f);
    *size = (size_t)n;
    return buf;
}

void fuzz_require(int cond, const char *what)
{
    if (cond)
        return;
    fprintf(stderr, "fuzz property broken: %s\n", what);
    abort();
}

void fuzz_check_error(const char *err, const char *path)
{
    if (err[0] == '\0' || strstr(err, path) == NULL) {
        fprintf(stderr, "fuzz property broken: the error \"%s\" does not name %s\n", err, path);
        abort();
    }
    for (const unsigned char *c = (const unsigned char *)err; *c; c++)
        if (*c < 0x20 || *c >= 0x7f) {
            fprintf(stderr, "fuzz property broken: byte 0x%02x in the error \"%s\"\n", *c, err);
            abort();
        }
}
