/*
 * dlpack/dlpack.h: DLPack's own path to its header, as TVM's C sources include it.
 * rvm's copy of the DLPack header is <rvm/dlpack.h>.
 */
#include "../rvm/dlpack.h"
