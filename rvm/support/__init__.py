"""Support code with no dependency on the rest of rvm: errors, environment, names, caches."""
