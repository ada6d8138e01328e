/* Placeholder until the area is implemented. */
#include "sb_model.h"
void sb_train_config_defaults(sb_train_config *cfg) { (void)cfg; SB_ASSERT(!"not yet implemented"); }
