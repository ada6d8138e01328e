/* Data set names to files: MNIST as tools/fetch-data writes it, and
 * Fashion-MNIST as Debian's dataset-fashion-mnist installs it. */
#include <string.h>
#include <unistd.h>

#include "sb_dataset.h"

#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

typedef struct dataset_files {
    const char *name;
    int in_data_dir;        /* 1: under data_dir, 0: an absolute system path */
    const char *images;
    const char *labels;
    const char *hint;       /* how to get the files when they are missing */
} dataset_files;

static const dataset_files dataset_table[] = {
    {"mnist", 1, "mnist-images-idx3-ubyte", "mnist-labels-idx1-ubyte",
     "run tools/fetch-data to fetch MNIST"},
    {"fashion-mnist", 0, FASHION_MNIST_DIR "/train-images-idx3-ubyte.gz",
     FASHION_MNIST_DIR "/train-labels-idx1-ubyte.gz",
     "apt-get install dataset-fashion-mnist"},
    {"fashion-mnist-test", 0, FASHION_MNIST_DIR "/t10k-images-idx3-ubyte.gz",
     FASHION_MNIST_DIR "/t10k-labels-idx1-ubyte.gz",
     "apt-get install dataset-fashion-mnist"},
};

static void path_join(char *out, size_t outlen, const dataset_files *f, const char *dir,
                      const char *file)
{
    if (f->in_data_dir)
        snprintf(out, outlen, "%s/%s", dir, file);
    else
        snprintf(out, outlen, "%s", file);
}

static const dataset_files *files_of(const char *name)
{
    size_t count = sizeof dataset_table / sizeof dataset_table[0];
    for (size_t i = 0; i < count; i++)
        if (strcmp(dataset_table[i].name, name) == 0)
            return &dataset_table[i];
    return NULL;
}

bool sb_dataset_images_path(char *out, size_t outlen, const char *name, const char *data_dir)
{
    const dataset_files *f = files_of(name);
    if (f != NULL)
        path_join(out, outlen, f, data_dir != NULL ? data_dir : "data", f->images);
    return f != NULL;
}

sb_status sb_dataset_open(sb_dataset *train_or_all, const char *name,
                          const char *data_dir, char *err, size_t errlen)
{
    SB_ASSERT(train_or_all != NULL && name != NULL);
    memset(train_or_all, 0, sizeof *train_or_all);
    const char *dir = data_dir != NULL ? data_dir : "data";
    const dataset_files *f = files_of(name);
    if (f == NULL) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "unknown data set '%s' (known: mnist, fashion-mnist, "
                     "fashion-mnist-test)", name);
        return SB_ERR_USAGE;
    }

    char images[1024], labels[1024];
    path_join(images, sizeof images, f, dir, f->images);
    path_join(labels, sizeof labels, f, dir, f->labels);
    const char *paths[2] = {images, labels};
    for (int i = 0; i < 2; i++) {
        if (access(paths[i], F_OK) != 0) {
            if (err != NULL && errlen > 0)
                snprintf(err, errlen, "%s: missing (data set '%s'); %s", paths[i], name, f->hint);
            return SB_ERR_INPUT;
        }
    }
    return sb_dataset_load_idx(train_or_all, images, labels, err, errlen);
}
