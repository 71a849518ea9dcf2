"""Optional dependencies, imported when first needed with a message naming the extra.

>>> import_optional("math", "dev", "this example").sqrt(4.0)
2.0
"""
import importlib


def import_optional(module, extra, what):
    """The module ``module``, or ImportError saying that ``what`` needs it and which
    extra of rvm installs it (``pip install 'rvm[extra]'``)."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{what} needs the optional package '{module.split('.')[0]}', which "
                          f"is not installed ({err}); install it with "
                          f"pip install 'rvm[{extra}]'") from None
