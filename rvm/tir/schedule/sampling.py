"""Random sampling for schedules: perfect tilings of a loop extent, categorical choices."""


def prime_factors(n):
    """The prime factors of ``n`` with multiplicity, smallest first."""
    out = []
    p = 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def divisors(n):
    """The divisors of ``n``, ascending."""
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def sample_perfect_tile(rng, extent, n, max_innermost_factor):
    """``n`` factors whose product is ``extent``, the last at most ``max_innermost_factor``
    (no limit when it is not positive): the innermost factor is drawn uniformly among the
    allowed divisors, the remaining prime factors go to uniformly drawn positions."""
    if n == 1:
        return [extent]
    allowed = [d for d in divisors(extent)
               if max_innermost_factor is None or max_innermost_factor <= 0
               or d <= max_innermost_factor]
    inner = rng.choice(allowed)
    factors = [1] * (n - 1)
    for p in prime_factors(extent // inner):
        factors[rng.randrange(n - 1)] *= p
    return factors + [inner]


def check_perfect_tile(decision, extent, n):
    """The reason ``decision`` is not a perfect tiling of ``extent`` in ``n`` parts, or None."""
    if not isinstance(decision, (list, tuple)) or len(decision) != n:
        return f"expected a list of {n} factors, got {decision!r}"
    if not all(isinstance(f, int) and not isinstance(f, bool) and f >= 1 for f in decision):
        return f"factors must be positive integers, got {decision!r}"
    product = 1
    for f in decision:
        product *= f
    if product != extent:
        return f"the factors {list(decision)} multiply to {product}, not the extent {extent}"
    return None


def sample_categorical(rng, probs):
    """An index drawn with the given probabilities."""
    total = float(sum(probs))
    x = rng.random() * total
    acc = 0.0
    for k, p in enumerate(probs):
        acc += p
        if x < acc:
            return k
    return len(probs) - 1
