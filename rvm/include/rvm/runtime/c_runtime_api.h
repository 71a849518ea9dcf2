/*
 * rvm/runtime/c_runtime_api.h: the runtime C API at TVM's path
 * (<tvm/runtime/c_runtime_api.h> with tvm replaced by rvm), so C sources written for it
 * compile unchanged. It is rvm's one runtime header, <rvm/c_runtime_api.h>.
 */
#include "../c_runtime_api.h"
