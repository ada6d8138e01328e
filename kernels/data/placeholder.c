/* Placeholder until the area is implemented. */
#include "sb_dataset.h"
void sb_dataset_free(sb_dataset *d) { (void)d; }
