"""The legalization rules of LegalizeOps, one module per operator family.

``registry`` holds the table (``LEGALIZE_RULES``, keyed by operator name);
each family module registers its rules when imported, and
``rvm.relax.transform.legalize_ops`` imports them all.
"""
