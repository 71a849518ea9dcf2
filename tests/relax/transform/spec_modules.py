"""The SPEC's modules (sections 3, 5, 6) parsed from tests/spec_programs.py, for pass tests."""
from rvm.script import from_source
from tests.spec_programs import (  # noqa: F401  (mlp_* re-exported for the pipeline tests)
    MY_MODULE, MY_MODULE_MIXTURE, MY_MODULE_WITH_EXTERN_CALL, mlp_params, mlp_reference,
)

MyModule = from_source(MY_MODULE)
MyModuleWithEnv = from_source(MY_MODULE_WITH_EXTERN_CALL)
MyModuleMixture = from_source(MY_MODULE_MIXTURE)
