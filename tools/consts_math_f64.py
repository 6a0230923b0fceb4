#!/usr/bin/env python3
"""Prints the exact constants (hex floats) used by include/nuvec/kernels/math_f64.h."""
import mpmath as mp
mp.mp.dps = 600


def split(v, bits=53):
    """hi = v rounded to `bits` significant bits, lo = (v - hi) rounded to double."""
    e = mp.floor(mp.log(abs(v), 2))
    q = mp.mpf(2) ** (e - bits + 1)
    hi = mp.nint(v / q) * q
    lo = v - hi
    return float(hi), float(lo)


def show(name, v, bits=53):
    hi, lo = split(v, bits)
    assert mp.mpf(hi) == mp.mpf(split(v, bits)[0])
    print(f"{name}_HI = {hi.hex()}, {name}_LO = {lo.hex()}")


show('LN2_42', mp.log(2), 42)
show('LN2', mp.log(2))
show('INV_LN2', 1 / mp.log(2))
show('INV_LN10', 1 / mp.log(10))
show('PIO2', mp.pi / 2)
show('PIO4', mp.pi / 4)
show('PI', mp.pi)
show('PI3O4', 3 * mp.pi / 4)
show('MINUS_TWO_OVER_3SQRTPI', -2 / (3 * mp.sqrt(mp.pi)))
show('ONE_OVER_5SQRTPI', 1 / (5 * mp.sqrt(mp.pi)))
show('TWO_OVER_SQRTPI', 2 / mp.sqrt(mp.pi))
show('SQRTPI_OVER_2', mp.sqrt(mp.pi) / 2)
show('TWO_THIRDS', mp.mpf(2) / 3)
show('TWO_FIFTHS', mp.mpf(2) / 5)
show('TAN_PI8', mp.tan(mp.pi / 8))
show('TAN_3PI8', mp.tan(3 * mp.pi / 8))
# 2/pi in 53-bit chunks: 2/pi = sum_j c_j 2^(-53 (j+1)), c_j integer < 2^53
t = 2 / mp.pi
cs = []
for j in range(23):
    t *= mp.mpf(2) ** 53
    c = mp.floor(t)
    t -= c
    cs.append(int(c))
print("chunks:")
print(", ".join(float(c).hex() for c in cs))
