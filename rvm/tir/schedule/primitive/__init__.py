"""The schedule primitives, grouped by concept; each module defines a mixin of Schedule."""
